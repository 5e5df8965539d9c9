"""Single-site and block samplers: Metropolis and Gibbs on one coordinate (``single_site``), exact
Gibbs on a block of coordinates (``block_gibbs``) and the Hamming-ball sampler built on it (``hamming_ball``).
"""
