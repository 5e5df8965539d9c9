"""Locally balanced proposals (Zanella 2020; LSB paper §2, Eq. 2): the samplers (``locally_balanced``) and
the sum-trees they draw their flips from (``sumtree``).
"""
