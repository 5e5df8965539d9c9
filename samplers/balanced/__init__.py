"""Locally balanced proposals (LSB paper, §2, Eq. 2–3; Zanella 2020): the sampler (``locally_balanced``) and
the sum-trees it draws its flips from in O(log d) (``sumtree``).
"""
