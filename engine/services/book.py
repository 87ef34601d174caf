"""Polyglot opening books: open and check a `.bin` file once, then choose moves by their weights.

A Polyglot book is a file of 16-byte entries sorted by position key: key (8 bytes), move
(2), weight (2), learn (4), all big-endian. python-chess's reader finds a position's
entries, turns the book's king-takes-rook castling into the board's notation and drops
entries that are illegal on the board (a key collision) or of weight 0 (deleted).
"""

from __future__ import annotations

import os
import random
import stat
from dataclasses import dataclass
from typing import Collection, Optional

import chess
import chess.polyglot
import numpy as np

# One book entry as NumPy reads it: the Polyglot layout, big-endian.
ENTRY_DTYPE = np.dtype([("key", ">u8"), ("move", ">u2"), ("weight", ">u2"), ("learn", ">u4")])
# The move field: to square in bits 0-5, from square in bits 6-11, promotion in bits 12-14
# (0 none, 1 knight ... 4 queen); from == to would be a drop, which chess has not.
MOVE_SQUARE_MASK = 0x3F
MOVE_FROM_SHIFT = 6
MOVE_PROMOTION_SHIFT = 12
MOVE_PROMOTION_MASK = 0x7
MAX_PROMOTION = 4


class BookError(Exception):
    """A file that is not a usable Polyglot book; the message says why."""


@dataclass(frozen=True)
class BookMove:
    """A move chosen from the book, with its weight and the weights of all the position's book moves."""

    move: chess.Move
    weight: int
    total: int


def entries_problem(entries: np.ndarray) -> Optional[str]:
    """Why an array of Polyglot entries is not a book (None when it looks like one)."""
    if len(entries) == 0:
        return "it has no entries"
    keys = entries["key"]
    unsorted = np.flatnonzero(keys[1:] < keys[:-1])
    if len(unsorted):
        return (f"its entries are not sorted by key as a Polyglot book's are (entry {int(unsorted[0]) + 2} of "
                f"{len(entries)} is out of order): not a book, or a damaged one")
    moves = entries["move"].astype(np.int64)
    to_square = moves & MOVE_SQUARE_MASK
    from_square = (moves >> MOVE_FROM_SHIFT) & MOVE_SQUARE_MASK
    promotion = (moves >> MOVE_PROMOTION_SHIFT) & MOVE_PROMOTION_MASK
    bad = np.flatnonzero((from_square == to_square) | (promotion > MAX_PROMOTION))
    if len(bad):
        return f"entry {int(bad[0]) + 1} of {len(entries)} holds no chess move (0x{int(moves[bad[0]]):04x})"
    return None


class Book:
    """A Polyglot book opened once, with its own random generator for the weighted choice."""

    def __init__(self, path: str, seed: Optional[int] = None) -> None:
        """Open and check the book, or raise OSError (cannot read it) or BookError (not a book)."""
        self.path = path
        self.name = os.path.basename(os.path.normpath(path))
        status = os.stat(path)  # not open(): opening a FIFO would wait for a writer
        if stat.S_ISDIR(status.st_mode):
            raise BookError("it is a directory, not a Polyglot .bin file")
        if not stat.S_ISREG(status.st_mode):
            raise BookError("it is not a regular file")
        size = status.st_size
        if size % ENTRY_DTYPE.itemsize:
            raise BookError(f"its size, {size} bytes, is not a whole number of {ENTRY_DTYPE.itemsize}-byte "
                            f"entries: a truncated or damaged book")
        self.reader = chess.polyglot.open_reader(path)
        problem = entries_problem(np.frombuffer(self.reader.mmap, dtype=ENTRY_DTYPE) if len(self.reader)
                                  else np.zeros(0, dtype=ENTRY_DTYPE))
        if problem is not None:
            self.reader.close()
            raise BookError(problem)
        self.size = len(self.reader)
        self.rng = random.Random(seed)

    def close(self) -> None:
        """Release the file."""
        self.reader.close()

    def moves(self, board: chess.Board) -> list[tuple[chess.Move, int]]:
        """The position's playable book moves with their weights, in the book's order (legal, weight > 0)."""
        return [(entry.move, entry.weight) for entry in self.reader.find_all(board)
                if board.is_legal(entry.move)]

    def choose(self, board: chess.Board, best_only: bool = False,
               among: Optional[Collection[chess.Move]] = None) -> Optional[BookMove]:
        """A book move for the board, or None out of book: drawn with probability weight/total, or
        the first of the highest weight with best_only; `among` (if given) restricts the moves."""
        moves = [(move, weight) for move, weight in self.moves(board) if among is None or move in among]
        if not moves:
            return None
        total = sum(weight for _, weight in moves)
        if best_only:
            move, weight = max(moves, key=lambda entry: entry[1])  # max keeps the first of equals
            return BookMove(move, weight, total)
        draw = self.rng.randrange(total)
        for move, weight in moves:
            if draw < weight:
                return BookMove(move, weight, total)
            draw -= weight
        raise AssertionError("the draw is below the total of the weights")
