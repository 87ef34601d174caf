"""Strength limiting (UCI_LimitStrength with UCI_Elo, or Skill Level): a smaller search, and at
times a near-best move.

A weaker player sees less and, now and then, prefers a move a little worse than the best one;
it does not drop its queen at random. The weakening is one knob, the *strength* (STRENGTH_MIN to
STRENGTH_FULL), and three numbers, each a named function of it:

- nodes: the node budget per move, NODES_AT_MIN at STRENGTH_MIN, doubled every
  STRENGTH_PER_DOUBLING up to TOP_STRENGTH and from there every TOP_PER_DOUBLING, so that the
  budget reaches what the full engine searches at a game's pace before STRENGTH_FULL (the search
  always completes depth 1, and the clock still binds: it never thinks longer); none at
  STRENGTH_FULL, which is the full search;
- margin: the most, in centipawns, that a chosen line may score below the best line, from
  MARGIN_AT_MIN at STRENGTH_MIN through MARGIN_AT_KNEE at KNEE_STRENGTH down to 0 at
  STRENGTH_FULL (linear between those points);
- miss chance: the chance of not playing the best line when another line lies within the
  margin, from MISS_AT_MIN through MISS_AT_KNEE down to 0 (the same points); the other line is
  drawn with a weight that falls linearly with its loss, to nothing at the margin.

The knee is there because the node budget stops weakening near the bottom (depth 1 always
completes), so below KNEE_STRENGTH the choice has to do more of the work. The top segment is there
because at one doubling every STRENGTH_PER_DOUBLING the budget just below STRENGTH_FULL (about
27,000 nodes) is a small fraction of the full engine's at 10+0.1: the first calibration of the
compiled search measured strength 1912 at 2023 and the full engine at 2328, a cliff no setting
between them could land on; doubling every TOP_PER_DOUBLING from TOP_STRENGTH the budget reaches
about 250,000 nodes at 1980, beyond what the clock allows at 10+0.1, and the knob rises to the
full engine without a jump the calibration cannot follow.

A setting's Elo is turned into a strength by CALIBRATION, a table of (rating, strength) points
measured against Stockfish 15.1's own UCI_Elo (linear between its points, clamped at its ends):
its first point is ELO_MIN, Stockfish's own floor, and its last point is the full engine's rating
on that scale, ELO_MAX, at STRENGTH_FULL: the top of the range is the full engine.
`scripts/calibrate.py` plays the matches and `scripts/calibrate.py --fit` rewrites the table from
their reports (the block between the CALIBRATION markers below); CALIBRATED says from which.
Because the weakening rests on nodes, not on the clock, a setting plays the same on a faster or a
slower machine (the full engine at the top does not: it is as strong as the machine lets it be).

Skill Level (0-20, Stockfish's option, 20 the full engine) plays at the Elo Stockfish 15.1 gives
that level, skill_level_elo(): 1346.6 + 143.4 * level ** 0.806 (its `Skill` of search.cpp), on the
same calibrated scale, so that Skill Level N against Stockfish at Skill Level N is an even game;
the levels whose Elo is at or above ELO_MAX play at full strength.

While another line than line 1 may be chosen the search runs with SKILL_MULTIPV lines (or more,
with MultiPV), so each candidate has an exact score; at STRENGTH_FULL with one. A line that mates
is never given up, and a line that is mated is never chosen over one that is not. (Stockfish's
Skill Level is the model: MultiPV 4 and `pick_best`, which adds a weakness-scaled random push to
each line's score; here the shares are explicit.) The random draws come from the caller's
random.Random (the Searcher's, seeded at its making), so the same search with the same seed
chooses the same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional

from garfish.engine.types import MATE_BOUND

STRENGTH_MIN = 1000           # the weakest the knob goes ...
STRENGTH_FULL = 2000          # ... and the full engine: no node budget, line 1 always played
SKILL_MULTIPV = 4             # root lines searched to choose among
NODES_AT_MIN = 130            # node budget per move at STRENGTH_MIN ...
STRENGTH_PER_DOUBLING = 130   # ... doubled for every this much strength
MARGIN_AT_MIN = 400           # centipawns a chosen line may lose against the best at STRENGTH_MIN ...
MISS_AT_MIN = 0.75            # ... and the chance of playing another line (within the margin),
KNEE_STRENGTH = 1400          # both falling linearly to these at KNEE_STRENGTH ...
MARGIN_AT_KNEE = 198
MISS_AT_KNEE = 0.37           # ... and on to 0 at STRENGTH_FULL
TOP_STRENGTH = 1900           # from here to STRENGTH_FULL the node budget doubles ...
TOP_PER_DOUBLING = 20         # ... every this much strength

SKILL_LEVEL_MAX = 20          # Skill Level: 0 to 20, 20 the full engine (Stockfish's range)

# BEGIN CALIBRATION (scripts/calibrate.py --fit rewrites this block)
CALIBRATED = '2026-11-29: 19 settings, 1200 games, r1+v1+v2 (scripts/calibrate.py --fit)'
CALIBRATION = ((1350, 1286), (1433, 1326), (1576, 1395), (1647, 1473), (1720, 1493), (1742, 1582), (1866, 1585), (1898, 1615), (1935, 1762), (2002, 1838), (2007, 1909), (2118, 1924), (2211, 1954), (2330, 2000))  # (rating on Stockfish 15.1's UCI_Elo scale, strength)
# END CALIBRATION

ELO_MIN = CALIBRATION[0][0]   # the UCI_Elo range: Stockfish 15.1's floor ...
ELO_MAX = CALIBRATION[-1][0]  # ... to the full engine's rating


def strength_at(elo: int) -> float:
    """The strength that plays at about `elo`: CALIBRATION's points joined by straight lines,
    clamped to its ends."""
    if elo <= CALIBRATION[0][0]:
        return float(CALIBRATION[0][1])
    for (low_elo, low), (high_elo, high) in zip(CALIBRATION, CALIBRATION[1:]):
        if elo <= high_elo:
            return low + (high - low) * (elo - low_elo) / (high_elo - low_elo)
    return float(CALIBRATION[-1][1])


def skill_level_elo(level: int) -> Optional[int]:
    """The UCI_Elo that Skill Level `level` plays at (Stockfish 15.1's mapping of levels to Elo),
    or None for the full engine (level 20, or a level whose Elo is at or above ELO_MAX)."""
    level = min(max(level, 0), SKILL_LEVEL_MAX)
    elo = round(1346.6 + 143.4 * level ** 0.806)
    if level >= SKILL_LEVEL_MAX or elo >= ELO_MAX:
        return None
    return max(elo, ELO_MIN)


def _ramp(strength: float, at_min: float, at_knee: float) -> float:
    """at_min at STRENGTH_MIN, at_knee at KNEE_STRENGTH, 0 at STRENGTH_FULL, linear in between."""
    strength = min(max(strength, STRENGTH_MIN), STRENGTH_FULL)
    if strength >= KNEE_STRENGTH:
        return at_knee * (STRENGTH_FULL - strength) / (STRENGTH_FULL - KNEE_STRENGTH)
    return at_knee + (at_min - at_knee) * (KNEE_STRENGTH - strength) / (KNEE_STRENGTH - STRENGTH_MIN)


def nodes_at(strength: float) -> Optional[int]:
    """The node budget per move at a strength; None (the full search) at STRENGTH_FULL."""
    if strength >= STRENGTH_FULL:
        return None
    strength = max(strength, STRENGTH_MIN)
    doublings = (min(strength, TOP_STRENGTH) - STRENGTH_MIN) / STRENGTH_PER_DOUBLING
    doublings += max(strength - TOP_STRENGTH, 0) / TOP_PER_DOUBLING
    return int(NODES_AT_MIN * 2 ** doublings)


def margin_at(strength: float) -> int:
    """The most a chosen line may score below the best one at a strength, in centipawns."""
    return round(_ramp(strength, MARGIN_AT_MIN, MARGIN_AT_KNEE))


def miss_at(strength: float) -> float:
    """The chance at a strength of playing another line than the best when one lies within the margin."""
    return _ramp(strength, MISS_AT_MIN, MISS_AT_KNEE)


@dataclass(frozen=True)
class Skill:
    """The weakening that makes the engine play at about `elo` on Stockfish 15.1's scale (see the
    module's mapping)."""

    elo: int

    @property
    def strength(self) -> float:
        """The knob's setting for this Elo (CALIBRATION; the functions of the knob clamp it)."""
        return strength_at(self.elo)

    @property
    def nodes(self) -> Optional[int]:
        """The node budget per move; None (the full search) at STRENGTH_FULL."""
        return nodes_at(self.strength)

    @property
    def margin(self) -> int:
        """The most a chosen line may score below the best one, in centipawns."""
        return margin_at(self.strength)

    @property
    def miss_chance(self) -> float:
        """The chance of playing another line than the best when one lies within the margin."""
        return miss_at(self.strength)

    @property
    def lines(self) -> int:
        """Root lines to search: SKILL_MULTIPV while another line may be chosen, else 1."""
        return SKILL_MULTIPV if self.miss_chance > 0 else 1

    def choose(self, scores: list[int], rng: random.Random) -> int:
        """The index of the line to play among lines scored best first (index 0: the best)."""
        best = scores[0]
        if best >= MATE_BOUND:
            return 0  # a mate is never given up
        margin = self.margin
        # Lines within the margin that are not mated, weighted by how far they stay inside it.
        others = [(index, margin - max(best - score, 0)) for index, score in enumerate(scores[1:], 1)
                  if best - score < margin and score > -MATE_BOUND]
        if not others or rng.random() >= self.miss_chance:
            return 0
        indices, weights = zip(*others)
        return rng.choices(indices, weights)[0]
