"""Garfish's UCI front end: parses commands, dispatches them to the engine, prints replies."""

# Garfish's version, written here only: pyproject.toml reads it for the package metadata, and the
# `id name` line and `garfish --version` print it.
__version__ = "0.3.0"
