"""Canonicalization patterns, one module per dialect."""
