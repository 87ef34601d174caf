"""Score constants, bounds, mate-score helpers and search limits."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Optional

import chess

MAX_PLY = 128
MATE = 32000
INF = 32001
MATE_BOUND = MATE - 2 * MAX_PLY  # scores beyond this are mates
TB_WIN = MATE_BOUND - 1  # a tablebase win at the root; TB_WIN - ply one found ply plies from it
TB_WIN_BOUND = TB_WIN - MAX_PLY  # scores from here to TB_WIN are tablebase wins (Stockfish's VALUE_TB range)
DRAW = 0

# Piece values in centipawns by python-chess piece type (0: no piece), for move ordering
# (MVV-LVA), exchanges (engine.board.see) and pruning margins; the evaluation's material values are
# its own (PeSTO's, engine.evaluation.classic). The king's 0 is its value as an attacker in move ordering
# (its captures are tried first: a legal king capture loses nothing); SEE gives it its own value.
PIECE_VALUE = (0, 100, 320, 330, 500, 900, 0)
# Moves engine.board.captures' kernels may list for one position: more than any position's pseudo-legal
# captures and promotions (the length of the array they write into, SearchBoard.codes).
MAX_LISTED_MOVES = 256


# The position as every kernel over one takes it, nine values in this order: pawns, knights, bishops,
# rooks, queens, kings (python-chess's bitboards), the black and the white pieces (python-chess's
# occupied_co[0] and [1]) and the side to move (True: White).
Bitboards = tuple[int, int, int, int, int, int, int, int, bool]


def bitboards(board: chess.Board) -> Bitboards:
    """The board as a kernel takes it (Bitboards): `kernel(*bitboards(board), ...)`. The search's
    hottest calls write the nine out instead, sparing this call at every node."""
    black, white = board.occupied_co
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, black, white,
            board.turn)


class Bound(IntEnum):
    """Kind of score stored in the transposition table."""

    NONE = 0
    UPPER = 1  # fail-low: true score <= stored score
    LOWER = 2  # fail-high: true score >= stored score
    EXACT = 3


# The bounds as plain ints, for the search's hot paths and the kernels: no enum lookups.
EXACT, LOWER, UPPER = int(Bound.EXACT), int(Bound.LOWER), int(Bound.UPPER)


def mate_in(ply: int) -> int:
    """Score of delivering mate `ply` plies from the root."""
    return MATE - ply


def mated_in(ply: int) -> int:
    """Score of being mated `ply` plies from the root."""
    return -MATE + ply


@dataclass
class Limits:
    """What bounds a search. Times are in seconds; None means no such limit."""

    movetime: Optional[float] = None
    """Search exactly this long (minus the move overhead)."""
    wtime: Optional[float] = None
    """White's remaining clock time."""
    btime: Optional[float] = None
    """Black's remaining clock time."""
    winc: float = 0.0
    """White's increment per move."""
    binc: float = 0.0
    """Black's increment per move."""
    movestogo: Optional[int] = None
    """Moves until the next time control (None: sudden death)."""
    depth: Optional[int] = None
    """Search no deeper than this many plies."""
    nodes: Optional[int] = None
    """Search no more than this many nodes."""
    mate: Optional[int] = None
    """Stop once a mate in this many moves (or fewer) is found."""
    infinite: bool = False
    """Search until stopped."""
    ponder: bool = False
    """Start in ponder mode: no time limit until ponderhit."""
    searchmoves: list[chess.Move] = field(default_factory=list)
    """Restrict the root to these moves (empty: all legal moves)."""
    move_overhead: float = 0.0
    """Time kept back from every move for GUI and network lag (the UCI option Move Overhead)."""
    multipv: int = 1
    """Search this many best root moves, each to an exact score (the UCI option MultiPV)."""
    elo: Optional[int] = None
    """Play at about this strength (UCI_LimitStrength with UCI_Elo; engine.search.skill): fewer nodes,
    and at times a near-best move. None: full strength."""

    def less(self, seconds: float) -> Limits:
        """These limits with `seconds` already gone from the clocks and the movetime (the time a `go`
        waited before its search began); the same limits when none has gone or the clock has not
        started (pondering)."""
        if seconds <= 0.0 or self.ponder:
            return self
        def left(value: Optional[float]) -> Optional[float]:
            return None if value is None else max(0.0, value - seconds)
        return replace(self, movetime=left(self.movetime), wtime=left(self.wtime), btime=left(self.btime))


TB_CP = 20000  # a tablebase win shows as TB_CP - plies to it, in centipawns (as Stockfish shows it)


@dataclass
class SearchInfo:
    """What one finished (or bounded) iteration found."""

    depth: int
    seldepth: int
    score: int
    bound: str  # "exact", "lower" (fail high) or "upper" (fail low)
    nodes: int
    time: float
    hashfull: int
    pv: list[chess.Move]
    multipv: int = 1  # the line's rank among the best root moves (1: the best; the MultiPV option)
    tbhits: int = 0  # positions found in the tablebases

    @property
    def cp(self) -> int:
        """The score in centipawns for display: a tablebase win (loss) as TB_CP minus (plus) the
        plies to the position found in the tables, else the score itself."""
        if TB_WIN_BOUND <= abs(self.score) < MATE_BOUND:
            return TB_CP - (TB_WIN - self.score) if self.score > 0 else -TB_CP + (TB_WIN + self.score)
        return self.score

    @property
    def nps(self) -> int:
        """Nodes per second so far."""
        return int(self.nodes / self.time) if self.time > 0 else 0

    @property
    def mate(self) -> Optional[int]:
        """Moves to mate (negative when being mated), or None for a centipawn score."""
        if abs(self.score) < MATE_BOUND:
            return None
        if self.score > 0:
            return (MATE - self.score + 1) // 2
        return -((MATE + self.score) // 2)
