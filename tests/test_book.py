"""engine.services.book: reading Polyglot books, refusing files that are none, and the weighted choice."""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import chess
import chess.polyglot
import pytest

from garfish.engine.services.book import Book, BookError

START_MOVES = {"e2e4": 1, "d2d4": 1, "c2c4": 1}  # performance.bin's entries for the start position
# After 1.e4 c5 2.c3: eight book moves of unequal weights (total 2970), in the book's order.
ALAPIN = "e2e4 c7c5 c2c3"
ALAPIN_MOVES = {"g8f6": 1443, "d7d5": 1065, "e7e6": 220, "d7d6": 145, "g7g6": 49, "d8a5": 20, "e7e5": 19, "b8c6": 9}
RUY_LOPEZ = "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6"  # the book's only move: castling, e1g1 (e1h1 in Chess960)
# lasker-trap.bin holds Black's moves of the Lasker trap, ending in an under-promotion with check.
LASKER_TRAP = "d2d4 d7d5 c2c4 e7e5 d4e5 d5d4 e2e3 f8b4 c1d2 d4e3 d2b4 e3f2 e1e2"
ENDGAME = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11"  # in no book
CHI_SQUARE_7_DOF_P001 = 24.32  # exceeded with probability 0.001 by 7 degrees of freedom


def board_after(moves: str) -> chess.Board:
    """The board after these UCI moves from the start position."""
    board = chess.Board()
    for text in moves.split():
        board.push_uci(text)
    return board


@pytest.fixture(scope="module")
def performance(books: Path) -> Book:
    return Book(str(books / "performance.bin"))


# --------------------------------------------------------------------------- the reader
def named(moves: list[tuple[chess.Move, int]]) -> dict[str, int]:
    return {move.uci(): weight for move, weight in moves}


def test_the_book_lists_a_positions_moves_with_their_weights(performance: Book) -> None:
    assert performance.size == 92954
    assert named(performance.moves(chess.Board())) == START_MOVES
    assert list(named(performance.moves(board_after(ALAPIN))).items()) == list(ALAPIN_MOVES.items())
    assert performance.moves(chess.Board(ENDGAME)) == [] and performance.choose(chess.Board(ENDGAME)) is None


def test_best_only_takes_the_highest_weight_and_the_first_of_equals(performance: Book) -> None:
    chosen = performance.choose(board_after(ALAPIN), best_only=True)
    assert chosen is not None and (chosen.move.uci(), chosen.weight, chosen.total) == ("g8f6", 1443, 2970)
    first = performance.choose(chess.Board(), best_only=True)
    assert first is not None and first.move.uci() == "e2e4"


class Draws(random.Random):
    """A random generator whose randrange returns the numbers given, in turn."""

    def __init__(self, draws: list[int]) -> None:
        super().__init__()
        self.draws = iter(draws)

    def randrange(self, *args: object, **kwargs: object) -> int:  # type: ignore[override]
        return next(self.draws)


def test_every_draw_below_the_total_maps_to_the_move_whose_weight_covers_it(books: Path) -> None:
    # Exact distribution: over all draws 0 .. total-1, each move is chosen exactly weight times.
    book = Book(str(books / "performance.bin"))
    total = sum(ALAPIN_MOVES.values())
    book.rng = Draws(list(range(total)))
    board = board_after(ALAPIN)
    counts = dict.fromkeys(ALAPIN_MOVES, 0)
    for _ in range(total):
        chosen = book.choose(board)
        assert chosen is not None and chosen.total == total
        counts[chosen.move.uci()] += 1
    assert counts == ALAPIN_MOVES


def test_the_seeded_weighted_choice_follows_the_weights(books: Path) -> None:
    book = Book(str(books / "performance.bin"), seed=12)
    board = board_after(ALAPIN)
    draws = 3000
    counts = dict.fromkeys(ALAPIN_MOVES, 0)
    for _ in range(draws):
        chosen = book.choose(board)
        assert chosen is not None
        counts[chosen.move.uci()] += 1
    total = sum(ALAPIN_MOVES.values())
    expected = {move: draws * weight / total for move, weight in ALAPIN_MOVES.items()}
    chi_square = sum((counts[move] - expected[move]) ** 2 / expected[move] for move in ALAPIN_MOVES)
    assert chi_square < CHI_SQUARE_7_DOF_P001, (counts, expected)
    assert all(counts.values()), counts  # the rarest move (9 of 2970) is drawn too
    # The same seed gives the same choices; the generator belongs to the book, not to the module.
    same, again, other = (Book(str(books / "performance.bin"), seed=seed) for seed in (12, 12, 13))
    first = [same.choose(board) for _ in range(30)]
    assert first == [again.choose(board) for _ in range(30)]
    assert first != [other.choose(board) for _ in range(30)]


def test_among_restricts_the_choice(performance: Book) -> None:
    board = chess.Board()
    chosen = performance.choose(board, among=[chess.Move.from_uci("d2d4")])
    assert chosen is not None and (chosen.move.uci(), chosen.weight, chosen.total) == ("d2d4", 1, 1)
    assert performance.choose(board, among=[chess.Move.from_uci("a2a3")]) is None


def test_castling_follows_the_boards_notation_and_promotions_are_read(performance: Book, books: Path) -> None:
    standard = performance.choose(board_after(RUY_LOPEZ))
    assert standard is not None and standard.move.uci() == "e1g1"
    chess960 = board_after(RUY_LOPEZ)
    chess960.chess960 = True
    king_takes_rook = performance.choose(chess960)
    assert king_takes_rook is not None and king_takes_rook.move.uci() == "e1h1"
    lasker = Book(str(books / "lasker-trap.bin"))
    chosen = lasker.choose(board_after(LASKER_TRAP))
    assert lasker.size == 7 and chosen is not None and chosen.move.uci() == "f2g1n"


def polyglot_entry(board: chess.Board, move: str, weight: int) -> bytes:
    """One 16-byte Polyglot entry for a move from this board (castling as king takes rook)."""
    parsed = chess.Move.from_uci(move)
    raw = parsed.to_square | parsed.from_square << 6 | (parsed.promotion - 1 if parsed.promotion else 0) << 12
    return struct.pack(">QHHI", chess.polyglot.zobrist_hash(board), raw, weight, 0)


def test_only_legal_moves_of_positive_weight_are_played(tmp_path: Path) -> None:
    # A key collision or a damaged entry can put an illegal move under a position's key; weight 0
    # marks a deleted move. Neither may come out of the book, whatever its weight.
    path = tmp_path / "crafted.bin"
    board = chess.Board()
    path.write_bytes(b"".join(polyglot_entry(board, move, weight) for move, weight in
                              [("e2e5", 60000), ("e1h1", 50000), ("e7e5", 40000), ("d2d4", 0), ("g1f3", 3)]))
    book = Book(str(path), seed=1)
    assert named(book.moves(board)) == {"g1f3": 3}
    chosen = [book.choose(board) for _ in range(20)] + [book.choose(board, best_only=True)]
    assert {(c.move.uci(), c.weight, c.total) if c else None for c in chosen} == {("g1f3", 3, 3)}


def corrupt_files(folder: Path, books: Path) -> dict[str, tuple[Path, str]]:
    """Files that are not usable books, each with the words its error must contain."""
    rng = random.Random(5)
    noise = folder / "noise.bin"
    noise.write_bytes(bytes(rng.randrange(256) for _ in range(16 * 200)))
    truncated = folder / "truncated.bin"
    truncated.write_bytes((books / "performance.bin").read_bytes()[:16 * 100 + 5])
    empty = folder / "empty.bin"
    empty.write_bytes(b"")
    fifo = folder / "fifo.bin"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    return {
        "noise": (noise, "not sorted by key"),
        "truncated": (truncated, "1605 bytes, is not a whole number of 16-byte entries"),
        "empty": (empty, "no entries"),
        "directory": (folder, "is a directory"),
        "fifo": (fifo, "not a regular file"),
        "missing": (folder / "missing.bin", "No such file or directory"),
    }


CORRUPT_KINDS = ["noise", "truncated", "empty", "directory", "fifo", "missing"]


@pytest.mark.parametrize("kind", CORRUPT_KINDS)
def test_a_file_that_is_no_book_is_refused_with_the_reason(kind: str, tmp_path: Path, books: Path) -> None:
    path, reason = corrupt_files(tmp_path, books)[kind]
    with pytest.raises((BookError, OSError)) as refused:
        Book(str(path))
    text = refused.value.strerror if isinstance(refused.value, OSError) else str(refused.value)
    assert reason in str(text)
