"""Perft: count the leaf nodes of the legal move tree through the engine's own move picker."""
