"""Tests of anonymatch.cli."""
