"""Columns of a table: their roles and types.

``schema`` (roles, missing values, the integer encoding of the QIs), ``qitypes`` (ordinal, date
and hierarchy QIs) and ``hierarchy`` (generalization hierarchies read from files).
"""
