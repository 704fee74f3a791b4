"""Estimates: memory per card, training and decoding speed, scaling; each with its assumptions."""
