"""Tests of anonymatch.tables."""
