"""Strength limiting (UCI_LimitStrength with UCI_Elo): a smaller search, and at times a near-best move.

A weaker player sees less and, now and then, prefers a move a little worse than the best one;
it does not drop its queen at random. So the skill at an Elo is three numbers, each a named
function of the Elo below (clamped to ELO_MIN..ELO_MAX):

- nodes: the node budget per move, NODES_AT_MIN at ELO_MIN, doubled every ELO_PER_DOUBLING
  (the search always completes depth 1, and the clock still binds: it never thinks longer);
- margin: the most, in centipawns, that a chosen line may score below the best line, from
  MARGIN_AT_MIN at ELO_MIN down to MARGIN_AT_MAX at ELO_MAX (linear);
- miss chance: the chance of not playing the best line when another line lies within the
  margin, from MISS_AT_MIN down to MISS_AT_MAX (linear); the other line is drawn with a
  weight that falls linearly with its loss, to nothing at the margin.

The search runs with SKILL_MULTIPV lines (or more, with MultiPV), so each candidate has an
exact score. A line that mates is never given up, and a line that is mated is never chosen
over one that is not. (Stockfish's Skill Level is the model: MultiPV 4 and `pick_best`, which
adds a weakness-scaled random push to each line's score; here the shares are explicit.)
The random draws come from the caller's random.Random (the Searcher's, seeded at its making),
so the same search with the same seed chooses the same move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from garfish.engine.types import MATE_BOUND

ELO_MIN = 1000          # the UCI_Elo range
ELO_MAX = 2400
SKILL_MULTIPV = 4       # root lines searched to choose among
NODES_AT_MIN = 200      # node budget per move at ELO_MIN ...
ELO_PER_DOUBLING = 150  # ... doubled for every this many Elo
MARGIN_AT_MIN = 300     # centipawns a chosen line may lose against the best at ELO_MIN ...
MARGIN_AT_MAX = 20      # ... down to this at ELO_MAX
MISS_AT_MIN = 0.5       # chance of playing another line (within the margin) at ELO_MIN ...
MISS_AT_MAX = 0.05      # ... down to this at ELO_MAX


@dataclass(frozen=True)
class Skill:
    """The weakening that makes the engine play at about `elo` (see the module's mapping)."""

    elo: int

    @property
    def strength(self) -> float:
        """Where the Elo lies in the range: 0.0 at ELO_MIN (or below), 1.0 at ELO_MAX (or above)."""
        return min(max((self.elo - ELO_MIN) / (ELO_MAX - ELO_MIN), 0.0), 1.0)

    @property
    def nodes(self) -> int:
        """The node budget per move."""
        return int(NODES_AT_MIN * 2 ** (self.strength * (ELO_MAX - ELO_MIN) / ELO_PER_DOUBLING))

    @property
    def margin(self) -> int:
        """The most a chosen line may score below the best one, in centipawns."""
        return round(MARGIN_AT_MIN + (MARGIN_AT_MAX - MARGIN_AT_MIN) * self.strength)

    @property
    def miss_chance(self) -> float:
        """The chance of playing another line than the best when one lies within the margin."""
        return MISS_AT_MIN + (MISS_AT_MAX - MISS_AT_MIN) * self.strength

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
