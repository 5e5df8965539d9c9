"""OPAD and OPAD+ (OPAD paper): the store of distinct visited (and proposed) states reweighted ∝ p̃
(``store``) and the hash index that finds a state among them (``particle_index``).
"""
