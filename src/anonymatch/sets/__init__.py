"""sets."""
