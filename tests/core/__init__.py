"""Tests of anonymatch.core."""
