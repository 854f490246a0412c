"""One module per CLI command beyond ``audit``: argument handling and output, no analysis."""
