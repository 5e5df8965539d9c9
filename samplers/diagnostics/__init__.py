"""Reading a run: effective sample size and R̂ (``ess``), convergence against a reference
(``convergence``), what one step proposed and why it was accepted (``inspection``), and the strict
vocabulary in which a comparison's verdict is said (``verdicts``).
"""
