"""Intracluster moves (IM paper): walks of fixed Hamming distance with pathwise acceptance, Eq. 2, 3
and 6 (``walks``), their adaptation (``walk_adaptation``), the Kawasaki baseline (``kawasaki``) and the
fixed-distance base both share (``fixed_distance``).
"""
