"""Training positions: reading, caching, filtering, the split by game and the network's features.

Input files hold one position a line, `FEN;SCORE;BEST;RESULT` (gzip-compressed or plain, or
packed as games: garfish.arena.pack, read as the positions of the text it unpacks to): SCORE in centipawns and
RESULT (1, 0.5, 0) from White's side, BEST the move played in UCI notation (see
../shared/data/train/README.md). A line starts a new game when its position is not
the previous line's after that line's BEST move: the pieces, the side to move and both move
counters are compared (castling rights and the en passant square are not).

Parsing text is vectorised where it can be (the piece placement, the moves, the game boundaries);
the in-check test is a Numba kernel (train.rows). A pack is read from its records, its moves
played on the board in Numba, not through its text (pack_positions). The parsed arrays of a file
are cached as .npz under the SHA-256 of the file's bytes, unfiltered, so that any filter or split
is applied in a moment on the next run.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

import chess
import numpy as np

from garfish.arena.pack import PACK_HEADER, PackError, Position, gunzip, is_pack, unpack
from garfish.engine.evaluation.network import (
    CLASSIC_BASE, FEATURES, KING_BUCKET_MAPS, NO_BASE, NO_KING_BUCKETS, feature_index, output_bucket,
)

CACHE_VERSION = 1
GZIP_MAGIC = b"\x1f\x8b"
EMPTY = ord(".")
# The 12 piece planes of a position, White's pieces first, in python-chess's type order; the
# dense index plane * 64 + square runs over all 768 (colour, type, square) triples.
PLANES = b"PNBRQKpnbrqk"
MAX_PIECES = 32
PAD = -1  # the feature lists' filler after a position's last piece
RESULTS = {"1": 2, "0.5": 1, "0": 0}  # White's result in half points
PROMOTIONS = b"nbrq"  # the UCI promotion letters
# str.translate table turning a FEN placement into 64 characters, a8 first, '.' for empty.
EXPAND = str.maketrans({**{str(n): "." * n for n in range(1, 9)}, "/": None})
SQUARE_LETTERS = PLANES.decode() + "."  # what a square of an expanded placement may hold
FEN_ORDER = np.arange(64) ^ 56  # the FEN's i-th square (a8, b8, ..., h1) is python-chess's square i ^ 56
# A promotion's piece by the side to move (0 Black, 1 White) and a pack's piece type (2 knight ...
# 5 queen), as pack.PROMOTED; and the UCI letter of each type, as _parse_moves reads it.
PACK_PROMOTED = np.array([[0, 0] + [ord(c) for c in "nbrq"], [0, 0] + [ord(c) for c in "NBRQ"]], dtype=np.uint8)
PACK_LETTERS = np.array([0, 0] + [ord(c) for c in "nbrq"], dtype=np.int64)


class DataError(ValueError):
    """A training file that cannot be read, with the file, the line and the reason."""


@dataclass
class Positions:
    """Parsed positions, one row each (arrays of equal length)."""

    pieces: np.ndarray    # uint64 [N, 12]: the bitboards of PLANES
    turn: np.ndarray      # bool [N]: True when White is to move
    score: np.ndarray     # int32 [N]: SCORE, White's view
    result: np.ndarray    # int8 [N]: RESULT in half points (2 White won, 1 draw, 0 Black won)
    game: np.ndarray      # int64 [N]: the game, numbered from 0 in file order
    in_check: np.ndarray  # bool [N]: the side to move is in check
    noisy: np.ndarray     # bool [N]: BEST is a capture (en passant included) or a promotion

    def __len__(self) -> int:
        return len(self.turn)

    def select(self, mask: np.ndarray) -> "Positions":
        """The rows where mask is true (or the rows of an index array)."""
        return Positions(**{f.name: getattr(self, f.name)[mask] for f in fields(self)})

    @property
    def games(self) -> int:
        """How many games the rows are numbered into."""
        return int(self.game.max()) + 1 if len(self) else 0


def concatenate(parts: Sequence[Positions]) -> Positions:
    """Positions of several files one after the other, their games numbered on."""
    offsets = np.cumsum([0] + [part.games for part in parts])
    joined = {f.name: np.concatenate([getattr(part, f.name) for part in parts]) for f in fields(Positions)}
    joined["game"] = np.concatenate([part.game + offset for part, offset in zip(parts, offsets)])
    return Positions(**joined)


def fill(sizes: Sequence[int], parts: Iterable[Positions]) -> Positions:
    """concatenate()'s positions, made from parts that come one at a time (sizes: how many positions
    each holds) into arrays made once for the whole: only one part is held beside the whole, not all
    of them (half the memory for 40 million positions)."""
    total, whole, at, games = int(sum(sizes)), {}, 0, 0
    for size, part in zip(sizes, parts):
        if len(part) != size:
            raise DataError(f"a file's positions changed between two reads ({size:,}, then {len(part):,})")
        for f in fields(Positions):
            column = getattr(part, f.name)
            if f.name not in whole:
                whole[f.name] = np.empty((total, *column.shape[1:]), dtype=column.dtype)
            whole[f.name][at:at + size] = column + games if f.name == "game" else column
        at, games = at + size, games + part.games
    return Positions(**whole)


# --- Reading a file ---------------------------------------------------------------------------

def file_text(data: bytes, name: str = "<data>") -> str:
    """A file's text: unpacked when it is a pack (PackError if it cannot be), decompressed when it
    is gzip."""
    if is_pack(data):
        return unpack(data, name)
    if data.startswith(GZIP_MAGIC):
        data = gunzip(data)
    return data.decode("utf-8")


def _column(values: Sequence[str], dtype: type, what: str, name: str) -> np.ndarray:
    """Numeric strings as an array; DataError naming the first bad line."""
    try:
        return np.array(values, dtype=np.str_).astype(dtype)
    except (ValueError, OverflowError):
        for number, value in enumerate(values, 1):
            try:
                dtype(value)
            except (ValueError, OverflowError):
                raise DataError(f"{name}:{number}: {what} {value!r} is not an integer") from None
        raise


def parse_lines(lines: Sequence[str], name: str = "<data>",
                progress: Optional[Callable[[int], object]] = None) -> Positions:
    """Parse `FEN;SCORE;BEST;RESULT` lines (DataError on a malformed one). progress(n) is told of
    the positions checked as the slow in-check pass goes."""
    rows = [line.split(";") for line in lines]
    for number, row in enumerate(rows, 1):
        if len(row) != 4 or len(row[0].split(" ")) != 6:
            raise DataError(f"{name}:{number}: expected 'FEN;SCORE;BEST;RESULT' with a 6-field FEN: "
                            f"{lines[number - 1][:100]!r}")
    if not rows:
        raise DataError(f"{name}: no positions")
    fens, scores, bests, results = zip(*rows)
    placement, turns, _castling, _ep, halfmoves, fullmoves = zip(*(fen.split(" ") for fen in fens))

    # The board: 64 bytes a position in python-chess's square order, then 12 bitboards.
    expanded = []
    for number, text in enumerate(placement, 1):
        squares = _expanded(text)
        if squares is None:
            raise DataError(f"{name}:{number}: bad piece placement {text!r}")
        expanded.append(squares)
    board = np.frombuffer("".join(expanded).encode("ascii"), dtype=np.uint8).reshape(-1, 64)[:, FEN_ORDER]

    turn_array = np.array(turns, dtype=np.str_)
    bad = np.flatnonzero((turn_array != "w") & (turn_array != "b"))
    if len(bad):
        raise DataError(f"{name}:{bad[0] + 1}: side to move {turns[bad[0]]!r} is neither 'w' nor 'b'")
    turn = turn_array == "w"
    halfmove = _column(halfmoves, int, "halfmove clock", name)
    fullmove = _column(fullmoves, int, "move number", name)
    score = _column(scores, int, "score", name).astype(np.int32)
    try:
        result = np.array([RESULTS[value.strip()] for value in results], dtype=np.int8)
    except KeyError as error:
        number = [value.strip() for value in results].index(error.args[0]) + 1
        raise DataError(f"{name}:{number}: result {error.args[0]!r} is not 1, 0.5 or 0") from None

    return positions_of(board, turn, halfmove, fullmove, score, result, _parse_moves(bests, name), progress)


def _expanded(placement: str) -> Optional[str]:
    """A FEN's piece placement as 64 characters, a8 first, "." for empty; None when it is none."""
    text = placement.translate(EXPAND)
    return None if len(text) != 64 or text.strip(SQUARE_LETTERS) else text


def positions_of(board: np.ndarray, turn: np.ndarray, halfmove: np.ndarray, fullmove: np.ndarray, score: np.ndarray,
                 result: np.ndarray, move: np.ndarray, progress: Optional[Callable[[int], object]] = None) -> Positions:
    """The positions of rows given as a text file's columns: each board (uint8 [N, 64], python-chess's
    square order, PLANES letters and "." for empty), side to move, clocks, SCORE, RESULT and BEST
    (_parse_moves' [N, 3]); their bitboards, games (a row continues the row before's game when it
    is that position after its move), in-check and noisy flags."""
    pieces = np.empty((len(board), len(PLANES)), dtype=np.uint64)
    for plane, symbol in enumerate(PLANES):
        bits = np.packbits(board == symbol, axis=1, bitorder="little")
        pieces[:, plane] = np.ascontiguousarray(bits).view("<u8")[:, 0]
    noisy, zeroing, after = _apply_moves(board, turn, move)
    # Row i continues row i - 1's game when it is that position after its move.
    follows = ((after[:-1] == board[1:]).all(axis=1) & (turn[1:] != turn[:-1])
               & (fullmove[1:] == fullmove[:-1] + ~turn[:-1])
               & (halfmove[1:] == np.where(zeroing[:-1], 0, halfmove[:-1] + 1)))
    game = np.cumsum(np.concatenate([[True], ~follows])) - 1
    in_check = _in_check(pieces, turn, progress)
    return Positions(pieces, turn, score, result, game.astype(np.int64), in_check, noisy)


def pack_positions(data: bytes, progress: Optional[Callable[[int], object]] = None) -> Optional[Positions]:
    """A pack file's positions read straight from its records, or None where its text must decide.

    The text of a pack is made by playing each record's moves from its first FEN (pack.Position) and
    writing every position as a FEN line, which parse_lines reads back into boards. Here the records
    are walked in Numba (train.rows.scan_records), each record's first FEN is read once, and its
    moves are played on the 64-square board as pack.Position.push plays them (play_records); the
    columns so made go through positions_of as the text's do, so the positions are the text path's,
    field for field (tests/test_pack.py), in a fraction of its time. None, for the text path to
    decide with its exact error or positions: broken blocks, a record cut short, a first FEN that
    pack.Position does not read or that a text line would not carry as it is, a promotion code
    outside n, b, r, q."""
    from garfish.train.rows import play_records, scan_records  # Numba: loaded only when asked for

    if not data.startswith(PACK_HEADER):
        return None
    body = data[len(PACK_HEADER):]
    try:
        raw = np.frombuffer(gunzip(body) if body else b"", dtype=np.uint8)
    except (OSError, EOFError, zlib.error):
        return None
    most = max(1, len(raw) // 6)  # a record takes 6 bytes at least
    fens, plies, codes_at, scores_at = (np.empty(most, dtype=np.int64) for _ in range(4))
    results = np.empty(most, dtype=np.int8)
    count = scan_records(raw, fens, plies, codes_at, scores_at, results)
    if count <= 0:
        return None
    first = np.empty((count, 64), dtype=np.uint8)
    white = np.empty(count, dtype=np.bool_)
    halfmoves, fullmoves = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    for r in range(count):
        fen_bytes = raw[fens[r]:codes_at[r] - 2].tobytes()
        try:
            fen = fen_bytes.decode("utf-8")
        except UnicodeDecodeError:
            return None
        # A FEN the text's lines would not carry as it is (a ";" or a line break in its en passant
        # field, which pack.Position does not check), or that pack.Position does not read.
        if not (fen.isascii() and fen.isprintable() and ";" not in fen) or Position.from_fen(fen) is None:
            return None
        placement, side, _castling, _ep, half, full = fen.split(" ")
        expanded = _expanded(placement)
        if expanded is None:
            return None
        first[r] = np.frombuffer(expanded.encode("ascii"), dtype=np.uint8)[FEN_ORDER]
        white[r], halfmoves[r], fullmoves[r] = side == "w", int(half), int(full)
    total = int(plies[:count].sum())
    board = np.empty((total, 64), dtype=np.uint8)
    turn = np.empty(total, dtype=np.bool_)
    halfmove, fullmove = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    score, result = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int8)
    move = np.empty((total, 3), dtype=np.int64)
    if not play_records(raw, count, plies, codes_at, scores_at, results, first, white, halfmoves, fullmoves,
                        PACK_PROMOTED, PACK_LETTERS, board, turn, halfmove, fullmove, score, result, move):
        return None
    return positions_of(board, turn, halfmove, fullmove, score.astype(np.int32), result, move, progress)


def _parse_moves(bests: Sequence[str], name: str) -> np.ndarray:
    """UCI moves as int [N, 3]: from square, to square, promotion letter (0 for none)."""
    text = np.array(bests, dtype="S6")
    lengths = np.char.str_len(text)
    codes = np.zeros((len(bests), 6), dtype=np.int64)
    codes[:] = text.view(np.uint8).reshape(len(bests), 6)
    files = codes[:, [0, 2]] - ord("a")
    ranks = codes[:, [1, 3]] - ord("1")
    valid = ((lengths == 4) | ((lengths == 5) & np.isin(codes[:, 4], list(PROMOTIONS)))) \
        & (files >= 0).all(1) & (files < 8).all(1) & (ranks >= 0).all(1) & (ranks < 8).all(1)
    bad = np.flatnonzero(~valid)
    if len(bad):
        raise DataError(f"{name}:{bad[0] + 1}: BEST {bests[bad[0]]!r} is not a UCI move")
    squares = ranks * 8 + files
    return np.stack([squares[:, 0], squares[:, 1], codes[:, 4]], axis=1)


def _apply_moves(board: np.ndarray, turn: np.ndarray, move: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's BEST made on its board: (noisy: a capture or a promotion, zeroing: a capture or a
    pawn move, the boards after the moves)."""
    rows = np.arange(len(board))
    origin, target, promotion = move[:, 0], move[:, 1], move[:, 2]
    mover = board[rows, origin]
    pawn = (mover == ord("P")) | (mover == ord("p"))
    king = (mover == ord("K")) | (mover == ord("k"))
    sideways = (origin % 8) != (target % 8)
    en_passant = pawn & sideways & (board[rows, target] == EMPTY)
    capture = (board[rows, target] != EMPTY) | en_passant
    after = board.copy()
    after[rows, origin] = EMPTY
    promoted = np.where(turn, promotion - 32, promotion)  # White's pieces are upper case
    after[rows, target] = np.where(promotion != 0, promoted, mover).astype(np.uint8)
    passed = rows[en_passant]
    after[passed, (origin[passed] // 8) * 8 + target[passed] % 8] = EMPTY
    # Castling (the king two files aside): the rook jumps over it.
    castles = rows[king & (np.abs(origin % 8 - target % 8) == 2)]
    short = target[castles] > origin[castles]
    rook_from = np.where(short, target[castles] + 1, target[castles] - 2)
    rook_to = np.where(short, target[castles] - 1, target[castles] + 1)
    after[castles, rook_to] = after[castles, rook_from]
    after[castles, rook_from] = EMPTY
    return capture | (promotion != 0), capture | pawn, after


def load_bitboards(board: chess.BaseBoard, planes: Sequence[int]) -> None:
    """Set a python-chess board's pieces from the 12 bitboards of PLANES."""
    white = planes[0] | planes[1] | planes[2] | planes[3] | planes[4] | planes[5]
    black = planes[6] | planes[7] | planes[8] | planes[9] | planes[10] | planes[11]
    board.pawns, board.knights, board.bishops = planes[0] | planes[6], planes[1] | planes[7], planes[2] | planes[8]
    board.rooks, board.queens, board.kings = planes[3] | planes[9], planes[4] | planes[10], planes[5] | planes[11]
    board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK] = white, black
    board.occupied = white | black
    board.promoted = 0


def _in_check(pieces: np.ndarray, turn: np.ndarray, progress: Optional[Callable[[int], object]]) -> np.ndarray:
    """Whether the side to move is in check (train.rows.in_check_rows: python-chess's rule on the
    bitboards, 58 times as fast as its attack tables on a reused board), told to progress in steps."""
    from garfish.train.rows import in_check_rows  # Numba: loaded only when asked for

    checked = np.zeros(len(turn), dtype=bool)
    step = 1_000_000
    for start in range(0, len(turn), step):
        in_check_rows(pieces, turn, start, min(start + step, len(turn)), checked)
        if progress:
            progress(min(step, len(turn) - start))
    return checked


def board_of(positions: Positions, row: int) -> chess.Board:
    """The python-chess board of a row (pieces and side to move; no castling, en passant or clocks)."""
    board = chess.Board(None)
    load_bitboards(board, positions.pieces[row].tolist())
    board.turn = bool(positions.turn[row])
    return board


# --- Files and the cache ----------------------------------------------------------------------

@dataclass(frozen=True)
class DataFile:
    """An input file: its path, size and SHA-256 (the cache key and the network's description)."""

    path: Path
    size: int
    sha256: str


def identify(path: Path) -> tuple[DataFile, bytes]:
    """A file's identity and bytes (DataError if it cannot be read)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DataError(f"cannot read {path}: {error.strerror or error}") from None
    return DataFile(path, len(data), hashlib.sha256(data).hexdigest()), data


def cache_path(cache: Path, source: DataFile) -> Path:
    """Where a file's parsed positions are cached: its name, its SHA-256 and the cache format."""
    stem = source.path.name.split(".")[0]
    return cache / f"{stem}-{source.sha256[:16]}-v{CACHE_VERSION}.npz"


def load_file(path: Path, cache: Optional[Path],
              progress: Optional[Callable[[int], object]] = None) -> tuple[DataFile, Positions, bool]:
    """A file's positions, from the cache when it has them (parsed and cached otherwise): the
    file's identity, the positions and whether they came from the cache."""
    source, data = identify(path)
    stored = cache_path(cache, source) if cache else None
    if stored and stored.is_file():
        with np.load(stored) as arrays:
            return source, Positions(**{f.name: arrays[f.name] for f in fields(Positions)}), True
    positions = pack_positions(data, progress) if is_pack(data) else None
    if positions is None:  # text, or a pack whose text must decide
        try:
            text = file_text(data, str(path))
        except PackError as error:
            raise DataError(str(error)) from None
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
            raise DataError(f"{path}: cannot decode ({error})") from None
        positions = parse_lines(text.splitlines(), str(path), progress)
    if stored:
        stored.parent.mkdir(parents=True, exist_ok=True)
        partial = stored.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(partial, **{f.name: getattr(positions, f.name) for f in fields(Positions)})
        os.replace(partial, stored)
    return source, positions, False


def default_cache() -> Path:
    """The cache folder: $XDG_CACHE_HOME/garfish/train (~/.cache/garfish/train)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "garfish" / "train"


# --- Filters, split, targets, features -------------------------------------------------------

@dataclass(frozen=True)
class Filters:
    """Which positions train: by default none in check, none whose BEST is a capture or a
    promotion, none with |SCORE| above max_score (0: no limit)."""

    keep_checks: bool = False
    keep_noisy: bool = False
    max_score: int = 3000

    def mask(self, positions: Positions) -> np.ndarray:
        """True for the positions kept."""
        keep = np.ones(len(positions), dtype=bool)
        if not self.keep_checks:
            keep &= ~positions.in_check
        if not self.keep_noisy:
            keep &= ~positions.noisy
        if self.max_score:
            keep &= np.abs(positions.score) <= self.max_score
        return keep

    def describe(self) -> str:
        """The filters in words."""
        dropped = [] if self.keep_checks else ["in check"]
        dropped += [] if self.keep_noisy else ["BEST a capture or promotion"]
        dropped += [f"|SCORE| > {self.max_score}"] if self.max_score else []
        return "positions dropped: " + (", ".join(dropped) if dropped else "none")


# The squares a castling right needs: the king on e1 with a rook on a1 or h1 (White), e8 with a8 or h8.
_CASTLING_SQUARES = ((PLANES.index(b"K"), chess.E1, PLANES.index(b"R"), chess.BB_A1 | chess.BB_H1),
                     (PLANES.index(b"k"), chess.E8, PLANES.index(b"r"), chess.BB_A8 | chess.BB_H8))


def could_castle(positions: Positions) -> np.ndarray:
    """True where a side may still have a castling right (its king and a rook on their first
    squares): a file mirror of such a position is not the same game (the files carry no castling
    right in the data, so the pieces decide)."""
    possible = np.zeros(len(positions), dtype=bool)
    for king_plane, king_square, rook_plane, rook_squares in _CASTLING_SQUARES:
        king_home = (positions.pieces[:, king_plane] & np.uint64(1 << king_square)) != 0
        rook_home = (positions.pieces[:, rook_plane] & np.uint64(rook_squares)) != 0
        possible |= king_home & rook_home
    return possible


# The number of set bits of each byte: men on a board, counted a byte of its bitboards at a time.
BYTE_BITS = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.uint8)
MEN_CHUNK = 1 << 20  # rows counted at once (their bytes: 96 MB)


def men(positions: Positions) -> np.ndarray:
    """int64 [N]: the men (kings included) on each position's board."""
    counts = np.empty(len(positions), dtype=np.int64)
    pieces = np.ascontiguousarray(positions.pieces, dtype=np.uint64)
    for start in range(0, len(positions), MEN_CHUNK):
        chunk = pieces[start:start + MEN_CHUNK]
        counts[start:start + len(chunk)] = BYTE_BITS[chunk.view(np.uint8)].reshape(len(chunk), -1).sum(axis=1)
    return counts


@dataclass(frozen=True)
class TableResults:
    """Results from the endgame tables (tablebase_results): each row's RESULT, and how many games reached the
    tables and how many of those the tables gave another result than the game's."""

    result: np.ndarray  # int8 [N]: RESULT in half points (as Positions.result)
    reached: int
    changed: int
    changed_positions: int


def tablebase_results(positions: Positions, probe_wdl: Callable[[chess.Board], Optional[int]],
                      max_men: int) -> TableResults:
    """The RESULT of every row, a game that reaches the tables taking theirs: the WDL of its first position that
    has at most max_men men, no castling right and an answer from probe_wdl (the side to move's 2, 1, 0, -1,
    -2; None: not in the tables), probed only just after a capture, where the fifty-move counter is 0, so that a
    win the fifty-move rule turns into a draw (1 or -1) is a draw here too. Every row of the game takes that
    result: Stockfish at 1,000 nodes a move draws many endings the tables win."""
    result = positions.result.copy()
    count = men(positions)
    game = positions.game
    fresh = np.ones(len(positions), dtype=bool)  # the game's first row, or the first after a capture
    fresh[1:] = (count[1:] < count[:-1]) | (game[1:] != game[:-1])
    candidates = np.flatnonzero((count <= max_men) & fresh & ~could_castle(positions))
    starts = np.searchsorted(game, np.arange(positions.games + 1))  # the rows of game g: starts[g]:starts[g + 1]
    reached = changed = changed_positions = 0
    settled = -1  # the last game given the tables' result
    for row in candidates.tolist():
        number = int(game[row])
        if number == settled:
            continue
        wdl = probe_wdl(board_of(positions, row))
        if wdl is None:
            continue
        settled = number
        reached += 1
        white = wdl if positions.turn[row] else -wdl
        tables = 2 if white == 2 else 0 if white == -2 else 1
        if tables != result[row]:
            changed += 1
            changed_positions += int(starts[number + 1] - starts[number])
            result[starts[number]:starts[number + 1]] = tables
    return TableResults(result, reached, changed, changed_positions)


def validation_games(games: int, fraction: float, seed: int) -> np.ndarray:
    """The games held out for validation: a seeded choice of round(fraction * games), at least one
    and, below a fraction of 1, at least one fewer than all (1: every game)."""
    count = games if fraction >= 1.0 else min(games - 1, max(1, round(fraction * games)))
    return np.sort(np.random.default_rng(seed).choice(games, size=count, replace=False))


def targets(positions: Positions, lam: float, k: float, rows: Optional[np.ndarray] = None) -> np.ndarray:
    """The training target from the side to move's view: lam * sigmoid(score / k) + (1 - lam) * result
    (of every position, or of positions[rows])."""
    turn, score, result = positions.turn, positions.score, positions.result
    if rows is not None:
        turn, score, result = turn[rows], score[rows], result[rows]
    sign = np.where(turn, 1.0, -1.0)
    score = score * sign
    result = np.where(turn, result, 2 - result) / 2.0
    return (lam / (1.0 + np.exp(-score / k)) + (1.0 - lam) * result).astype(np.float32)


def _perspective_table() -> np.ndarray:
    """int16 [2, 768]: row P maps a dense plane index (see PLANES) to feature_index for perspective P."""
    table = np.empty((2, FEATURES), dtype=np.int16)
    for perspective in chess.COLORS:
        for plane, symbol in enumerate(PLANES.decode()):
            piece = chess.Piece.from_symbol(symbol)
            for square in chess.SQUARES:
                table[int(perspective), plane * 64 + square] = feature_index(perspective, piece.color,
                                                                             piece.piece_type, square)
    return table


PERSPECTIVE = _perspective_table()


@dataclass
class Features:
    """The network's inputs: each position's active features from the side to move's view and the
    other side's (int16 [N, 32], PAD after the last), the piece count and the output bucket."""

    us: np.ndarray
    them: np.ndarray
    count: np.ndarray   # int64 [N]
    bucket: np.ndarray  # int64 [N]
    base: np.ndarray    # int64 [N]: the base evaluation the network's output is added to (0: none)


def classic_evaluations(positions: Positions, rows: Optional[np.ndarray] = None,
                        mirror: Optional[np.ndarray] = None) -> np.ndarray:
    """The hand-written evaluation (engine.evaluation.classic's kernel, side to move's view) of every position,
    or of positions[rows] (their file mirrors where mirror is true), int64."""
    from garfish.train.rows import classic_rows  # Numba: loaded only when asked for

    rows, mirror = _rows(positions, rows, mirror)
    result = np.empty(len(rows), dtype=np.int64)
    classic_rows(positions.pieces, positions.turn, rows, mirror, result)
    return result


def _rows(positions: Positions, rows: Optional[np.ndarray],
          mirror: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The rows (every one by default) and their mirror flags (none by default) as the kernels take them."""
    rows = np.arange(len(positions), dtype=np.int64) if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    mirror = np.zeros(len(rows), dtype=np.bool_) if mirror is None else np.ascontiguousarray(mirror, dtype=np.bool_)
    return rows, mirror


def features(positions: Positions, buckets: int, base: int = NO_BASE, layout: int = NO_KING_BUCKETS,
             rows: Optional[np.ndarray] = None, mirror: Optional[np.ndarray] = None) -> Features:
    """The inputs of every position in a layout (engine.evaluation.network.active_features), or of positions[rows]
    (their file mirrors, the a and h files swapped, where mirror is true), with the base evaluation
    of each (CLASSIC_BASE: the hand-written one) or zeros. Each row's features in piece-plane order
    (PLANES), squares ascending: the order the network's sums are taken in."""
    from garfish.train.rows import BAD_KINGS, OK, feature_rows  # Numba: loaded only when asked for

    rows, mirror = _rows(positions, rows, mirror)
    size = len(rows)
    us = np.full((size, MAX_PIECES), PAD, dtype=np.int16)
    them = np.full((size, MAX_PIECES), PAD, dtype=np.int16)
    count = np.zeros(size, dtype=np.int64)
    bad, reason = feature_rows(positions.pieces, positions.turn, rows, mirror, PERSPECTIVE, KING_BUCKET_MAPS[layout],
                               layout != NO_KING_BUCKETS, us, them, count)
    if bad != OK:
        if reason == BAD_KINGS:
            raise DataError("a position without exactly one king of each colour")
        pieces = sum(int(plane).bit_count() for plane in positions.pieces[rows[bad]])
        raise DataError(f"a position with {pieces} pieces")
    table = np.array([output_bucket(n, buckets) for n in range(MAX_PIECES + 1)], dtype=np.int64)
    base_scores = classic_evaluations(positions, rows, mirror) if base == CLASSIC_BASE else np.zeros(size, np.int64)
    return Features(us, them, count, table[count], base_scores)
