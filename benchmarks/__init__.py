"""Benchmarks: speed and cost measured in one run and printed as tables and ratios."""
