"""The audit of the papers' headline claims: one ``Claim`` per quoted sentence (``claim``), judged in the strict
vocabulary of ``samplers.diagnostics.verdicts`` from the experiments in ``benchmarks.papers`` (``lsb``,
``lsb_models``, ``intracluster``, ``opad``); ``paper_claims`` runs them and records the dashboard's table.
"""
