"""The papers' experiments, reproduced headless: the LSB paper's segmentation, RBM and Markov-network runs, the
intracluster paper's figures, OPAD's Ising, BVS and DAG experiments, DISCS's Ising findings and exact
enumeration. Each writes its tables and figures to ``benchmarks/results/``.
"""
