"""Samples for the reduction family (placeholder until its owner fills it in)."""
SAMPLES = []
