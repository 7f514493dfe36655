"""Tests of anonymatch.sets."""
