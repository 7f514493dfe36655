"""The test suite; its layout mirrors src/anonymatch."""
