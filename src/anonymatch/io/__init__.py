"""Reading inputs and reading/writing releases."""
