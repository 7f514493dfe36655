"""Risk of a table release, from the release and the original only.

``risk`` (the figures of ``anonymatch.tables.risk``: candidates, prosecutor risk, sensitive
disclosure, the original as a baseline) and ``attack`` (an adversary who knows some true
matches, Choromanski et al. §4).
"""
