"""What the samplers and the machinery cost, as ratios measured in one run (CPU time where the machine is shared):
throughput per core, per-step cost against the LSB authors' code, intracluster walks, sweeps' scaling, and the
bake-off that ranks every sampler by ESS per target evaluation.
"""
