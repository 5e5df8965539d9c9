"""MCMC over directed acyclic graphs for structure learning (OPAD paper, §5): structure MCMC
(``structure_mcmc``) and partition MCMC (``partition_mcmc``).
"""
