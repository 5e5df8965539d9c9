"""Gradient-informed samplers of the DISCS suite: DMALA and DLMC, whose proposals factorise over
coordinates (``factorised``), the path auxiliary sampler PAS (``path_auxiliary``) and the acceptance-rate
tuning they share (``acceptance_tuning``).
"""
