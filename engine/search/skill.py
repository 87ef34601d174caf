"""Strength limiting (UCI_LimitStrength with UCI_Elo): a smaller search, and at times a near-best move.

A weaker player sees less and, now and then, prefers a move a little worse than the best one;
it does not drop its queen at random. So the skill at an Elo (clamped to ELO_MIN..ELO_MAX) is
three numbers, each a named function of it:

- nodes: the node budget per move, NODES_AT_MIN at ELO_MIN, doubled every ELO_PER_DOUBLING
  (the search always completes depth 1, and the clock still binds: it never thinks longer);
  none at ELO_MAX, the top of the range, which is the full search;
- margin: the most, in centipawns, that a chosen line may score below the best line, from
  MARGIN_AT_MIN at ELO_MIN through MARGIN_AT_KNEE at KNEE_ELO down to 0 at BEST_LINE_ELO
  (linear between those points);
- miss chance: the chance of not playing the best line when another line lies within the
  margin, from MISS_AT_MIN at ELO_MIN through MISS_AT_KNEE at KNEE_ELO down to 0 at
  BEST_LINE_ELO (linear between those points); the other line is drawn with a weight that
  falls linearly with its loss, to nothing at the margin.

The knee is there because the node budget stops weakening near the bottom (depth 1 always
completes), so below KNEE_ELO the choice has to do more of the work.

ELO_MAX, the top of the range, plays at full strength (one line, no budget); the margin and the
miss chance reach 0 there (BEST_LINE_ELO). The constants were fitted to matches against
Stockfish 15.1 at the same UCI_Elo, 10+0.1 on a 2-core machine (docs/figures.md, "Strength limit
calibration"); measured with the runner that ends games by the rules only, the full engine rated
about 2000 on that scale then (1997 [1901, 2094] against Stockfish's 2200), so the range ends at
2000 (it ended at 2200 while the old runner's draws made the full engine look stronger). With the
network of issue 50 the full engine rates about 2300 there (2306 [2267, 2345]), so the range is to
be fitted again (docs/options.md).

Below BEST_LINE_ELO the search runs with SKILL_MULTIPV lines (or more, with MultiPV), so each
candidate has an exact score; from BEST_LINE_ELO up, where line 1 is always played, with one.
A line that mates is never given up, and a line that is mated is never chosen over one that is
not. (Stockfish's Skill Level is the model: MultiPV 4 and `pick_best`, which adds a
weakness-scaled random push to each line's score; here the shares are explicit.)
The random draws come from the caller's random.Random (the Searcher's, seeded at its making),
so the same search with the same seed chooses the same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional

from garfish.engine.types import MATE_BOUND

ELO_MIN = 1000          # the UCI_Elo range
ELO_MAX = 2000
SKILL_MULTIPV = 4       # root lines searched to choose among
NODES_AT_MIN = 130      # node budget per move at ELO_MIN ...
ELO_PER_DOUBLING = 130  # ... doubled for every this many Elo
MARGIN_AT_MIN = 400     # centipawns a chosen line may lose against the best at ELO_MIN ...
MISS_AT_MIN = 0.75      # ... and the chance of playing another line (within the margin),
KNEE_ELO = 1400         # both falling linearly to these at KNEE_ELO ...
MARGIN_AT_KNEE = 198
MISS_AT_KNEE = 0.37
BEST_LINE_ELO = 2000    # ... and on to 0 here, the top of the range: line 1 is always played


@dataclass(frozen=True)
class Skill:
    """The weakening that makes the engine play at about `elo` (see the module's mapping)."""

    elo: int

    @property
    def clamped(self) -> int:
        """The Elo within the range ELO_MIN..ELO_MAX."""
        return min(max(self.elo, ELO_MIN), ELO_MAX)

    def _ramp(self, at_min: float, at_knee: float) -> float:
        """at_min at ELO_MIN, at_knee at KNEE_ELO, 0 from BEST_LINE_ELO up, linear in between."""
        elo = self.clamped
        if elo >= BEST_LINE_ELO:
            return 0.0
        if elo >= KNEE_ELO:
            return at_knee * (BEST_LINE_ELO - elo) / (BEST_LINE_ELO - KNEE_ELO)
        return at_knee + (at_min - at_knee) * (KNEE_ELO - elo) / (KNEE_ELO - ELO_MIN)

    @property
    def nodes(self) -> Optional[int]:
        """The node budget per move; None (the full search) at ELO_MAX."""
        if self.clamped >= ELO_MAX:
            return None
        return int(NODES_AT_MIN * 2 ** ((self.clamped - ELO_MIN) / ELO_PER_DOUBLING))

    @property
    def margin(self) -> int:
        """The most a chosen line may score below the best one, in centipawns."""
        return round(self._ramp(MARGIN_AT_MIN, MARGIN_AT_KNEE))

    @property
    def miss_chance(self) -> float:
        """The chance of playing another line than the best when one lies within the margin."""
        return self._ramp(MISS_AT_MIN, MISS_AT_KNEE)

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
