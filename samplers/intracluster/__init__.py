"""Intracluster moves (Hamze & de Freitas, UAI 2010): walks at fixed Hamming distance with pathwise
acceptance, the paper's Eq. 2, 3 and 6 (``walks``), their adaptation (``walk_adaptation``), the Kawasaki
baseline (``kawasaki``) and the fixed-distance base both share (``fixed_distance``).
"""
