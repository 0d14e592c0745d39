"""Samples for the nn family (placeholder until its owner fills it in)."""
SAMPLES = []
