"""Privacy models of tables beyond plain k-anonymity.

``sensitive`` (ℓ-diversity and t-closeness on the sensitive columns), ``kl`` ((k,ℓ)-anonymity
releases), ``suppress`` (which records a suppression limit removes) and ``adaptive`` (per-record
anonymity levels: b-matching, suppression).
"""
