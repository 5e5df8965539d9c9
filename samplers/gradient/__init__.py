"""Gradient-informed samplers of the DISCS benchmark (Goshvadi et al., NeurIPS 2023 Datasets & Benchmarks):
DMALA and DLMC, whose proposals factorise over coordinates (``factorised``), the path auxiliary sampler PAS
(``path_auxiliary``), and the acceptance-rate tuning they share (``acceptance_tuning``).
"""
