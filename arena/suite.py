"""An EPD test suite: its positions, what counts as a solution, and solving one position with an engine.

Understands the opcodes bm (best moves), am (moves to avoid), id, and STS-style c0 point scores
(c0 "Qxb2=10, Rd8=4"). `garfish epd` (epd.py) runs a suite here or in worker processes, and a Dask
cluster's workers (cluster.py) solve its positions with `solve` too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import chess
import chess.engine

from garfish.arena.driver import EngineProcess, EngineSpec, MoveError

POINTS_ITEM = re.compile(r"^\s*(\S+?)\s*=\s*(-?\d+)\s*$")


@dataclass
class EpdPosition:
    """One test position: its place in the file, id, FEN and what counts as a solution."""

    number: int
    line: int
    id: str
    fen: str
    bm: list[str] = field(default_factory=list)  # UCI
    am: list[str] = field(default_factory=list)
    bm_san: list[str] = field(default_factory=list)
    am_san: list[str] = field(default_factory=list)
    points: dict[str, int] = field(default_factory=dict)  # UCI move -> points (c0)
    points_san: dict[str, int] = field(default_factory=dict)

    def expected(self) -> str:
        """What the suite expects, for display: 'bm Qg6 am Rxb2' or 'Qxb2=10 Rd8=4'."""
        parts = []
        if self.bm_san:
            parts.append("bm " + " ".join(self.bm_san))
        if self.am_san:
            parts.append("am " + " ".join(self.am_san))
        if self.points_san and not self.bm_san:
            parts.append(" ".join(f"{san}={pts}" for san, pts in self.points_san.items()))
        return " ".join(parts)

    def max_points(self) -> int:
        """The best score a move can get (0 without c0 points)."""
        return max(self.points.values(), default=0)


@dataclass
class PositionResult:
    """What the engine did in one position."""

    number: int
    line: int
    id: str
    fen: str
    expected: str
    move: Optional[str] = None
    san: Optional[str] = None
    solved: bool = False
    points: Optional[int] = None
    max_points: Optional[int] = None
    depth: Optional[int] = None
    seldepth: Optional[int] = None
    nodes: Optional[int] = None
    time: Optional[float] = None  # engine-reported search time, else wall time
    wall: Optional[float] = None
    score: Optional[str] = None
    error: Optional[str] = None
    note: Optional[str] = None


@dataclass
class EpdConfig:
    """Everything a worker needs: the engine, the search limit and the watchdog."""

    spec: EngineSpec
    limit: dict[str, float]
    watchdog: float


class SuiteError(Exception):
    """The suite file cannot be read."""


def parse_points(board: chess.Board, text: str) -> Optional[dict[chess.Move, int]]:
    """Read an STS-style c0 ('Qxb2=10, Rd8=4') into {move: points}; None if c0 is not in that format.

    Raises ValueError when the format matches but a move is not legal here.
    """
    items = [item for item in text.split(",") if item.strip()]
    matches = [POINTS_ITEM.match(item) for item in items]
    if not items or not all(matches):
        return None
    points: dict[chess.Move, int] = {}
    for match in matches:
        assert match is not None
        notation, value = match.group(1), int(match.group(2))
        try:
            move = board.parse_san(notation)
        except ValueError:
            try:
                move = board.parse_uci(notation)
            except ValueError:
                raise ValueError(f"c0 move '{notation}' is not legal here") from None
        points[move] = value
    return points


def move_list(value: object) -> list[chess.Move]:
    """The moves of a bm/am operand (ValueError if it holds anything else)."""
    if value is None:
        return []
    moves = value if isinstance(value, list) else [value]
    if not all(isinstance(move, chess.Move) for move in moves):
        raise ValueError("bm/am must list moves")
    return [move for move in moves if isinstance(move, chess.Move)]


def parse_position(text: str, number: int, line: int) -> EpdPosition:
    """Parse one EPD line (ValueError with the reason when it is not usable)."""
    board = chess.Board()
    operations = board.set_epd(text)
    if board.is_game_over():
        raise ValueError("the position has no legal moves or is already drawn")
    bm, am = move_list(operations.get("bm")), move_list(operations.get("am"))
    position = EpdPosition(number=number, line=line, id=str(operations.get("id", f"line {line}")),
                           fen=board.fen(), bm=[move.uci() for move in bm], am=[move.uci() for move in am],
                           bm_san=[board.san(move) for move in bm], am_san=[board.san(move) for move in am])
    comment = operations.get("c0")
    if isinstance(comment, str):
        points = parse_points(board, comment)
        if points is not None:
            position.points = {move.uci(): value for move, value in points.items()}
            position.points_san = {board.san(move): value for move, value in points.items()}
    if not (position.bm or position.am or position.points):
        raise ValueError("no bm, am or c0 points to check the move against")
    return position


def read_suite(path: Path, limit: int = 0) -> tuple[list[EpdPosition], list[tuple[int, str]]]:
    """All usable positions of a suite (at most `limit` if > 0) and the (line, reason) of skipped lines."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SuiteError(f"cannot read '{path}': {exc.strerror or exc}") from None
    positions: list[EpdPosition] = []
    problems: list[tuple[int, str]] = []
    for line_number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if limit and len(positions) >= limit:
            break
        try:
            positions.append(parse_position(stripped, len(positions) + 1, line_number))
        except ValueError as exc:
            problems.append((line_number, str(exc) or type(exc).__name__))
    return positions, problems


def judge(position: EpdPosition, move: Optional[str]) -> tuple[bool, Optional[int]]:
    """(solved, points) for a played move (UCI) or None."""
    points = (position.points.get(move, 0) if move else 0) if position.points else None
    if move is None:
        return False, points
    if position.bm or position.am:
        solved = (not position.bm or move in position.bm) and move not in position.am
    else:
        solved = points is not None and points == position.max_points()
    return solved, points


def make_limit(limit: dict[str, float]) -> chess.engine.Limit:
    """The python-chess Limit for {'time': s} / {'depth': d} / {'nodes': n}."""
    if "time" in limit:
        return chess.engine.Limit(time=limit["time"])
    if "depth" in limit:
        return chess.engine.Limit(depth=int(limit["depth"]))
    return chess.engine.Limit(nodes=int(limit["nodes"]))


def solve(engine: EngineProcess, position: EpdPosition, config: EpdConfig) -> PositionResult:
    """Search one position (restarting the engine once after a crash or timeout); raises EngineStartError."""
    board = chess.Board(position.fen)
    result = PositionResult(number=position.number, line=position.line, id=position.id, fen=position.fen,
                            expected=position.expected(),
                            max_points=position.max_points() if position.points else None)
    limit = make_limit(config.limit)
    for attempt in range(2):
        try:
            key = object()
            engine.new_game(key)
            played = engine.play(board, limit, key, config.watchdog)
        except MoveError as exc:
            result.error = f"{exc.kind}: {exc.detail}"
            result.wall = exc.elapsed
            if exc.kind == "illegal" or attempt == 1:
                break
            engine.restart()
            result.note = f"engine restarted after {exc.kind}"
            continue
        result.error = None
        result.move = played.move.uci()
        result.san = board.san(played.move)
        result.wall = played.elapsed
        info = played.info
        result.depth = info.get("depth")
        result.seldepth = info.get("seldepth")
        result.nodes = info.get("nodes")
        engine_time = info.get("time")
        result.time = float(engine_time) if engine_time is not None else played.elapsed
        score = info.get("score")
        result.score = str(score.relative) if score is not None else None
        break
    result.solved, result.points = judge(position, result.move)
    return result
