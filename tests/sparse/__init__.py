"""Tests of anonymatch.sparse."""
