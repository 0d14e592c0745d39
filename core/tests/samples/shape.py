"""Samples for the shape family (placeholder until its owner fills it in)."""
SAMPLES = []
