"""Learned balancing functions (LSB paper): the balancing functions and their parametrisations, Eq. 4–8
(``balancing``), the mutual-information objective, Eq. 9–12 (``mi_objective``), its gradient steps
(``learning``, ``optimizers``) and the LSB1, LSB2 and FLSB samplers (``self_balancing``).
"""
