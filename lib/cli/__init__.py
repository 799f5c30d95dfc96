"""The command line (`commands`: python -m lib ...) and the benchmark (`bench`)."""
