"""Garfish's arena: UCI clients that test engines (suite runner, match runner, Elo/SPRT, ratings).

They talk to engines over UCI only and import nothing of garfish.engine, garfish.uci or garfish.perft.
"""
