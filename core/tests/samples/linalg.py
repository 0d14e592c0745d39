"""Samples for the linalg family (placeholder until its owner fills it in)."""
SAMPLES = []
