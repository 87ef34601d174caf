"""Garfish's UCI front end: parses commands, dispatches them to the engine, prints replies."""
