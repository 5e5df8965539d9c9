"""MCMC over directed acyclic graphs for Bayesian structure learning (OPAD paper, §4.3, whose Eq. 16 is
the posterior p(G | D) ∝ p(G) p(D | G)): structure MCMC (``structure_mcmc``) and partition MCMC
(``partition_mcmc``), the paper's two reference samplers (§4.3.1).
"""
