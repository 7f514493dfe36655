"""Tests of anonymatch.app."""
