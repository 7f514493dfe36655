"""Tests of anonymatch.graphs."""
