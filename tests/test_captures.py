"""engine.board.captures' kernels against the python-chess paths they replace: the same moves, in the same order."""

from __future__ import annotations

import random
from typing import Iterator

import chess
import chess.polyglot
import numpy as np

from garfish.engine.board.captures import (
    ATTACKER_SHIFT, CODE_MASK, GOOD_BIT, TYPE_MASK, VICTIM_SHIFT, capture_list_kernel, evasion_order_kernel,
    quiescence_list_kernel, quiet_checks_kernel, quiet_list_kernel,
)
from garfish.engine.board.checks import check_masks_kernel
from reference_picker import PROMOTION_RANK
from garfish.engine.board.moves import encode
from garfish.engine.board.see import see_ge
from garfish.engine.types import MAX_LISTED_MOVES, PIECE_VALUE
from conftest import run_interpreted
from positions import random_game_boards
from reference_movepick import capture_moves, is_good_capture

# Positions with promotions (by a step and by capture, both sides), en passant, discovered checks
# and pieces en prise, besides the random games' positions.
FENS = (
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "1r2k3/2P3P1/8/3pP3/8/8/1p4p1/R3K2R w KQ d6 0 1",
    "1r2k3/2P3P1/8/8/3pP3/8/1p4p1/R3K1NR b KQ e3 0 1",
    "4k3/8/8/2B5/4N3/8/4R3/4K3 w - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
)


def boards() -> Iterator[chess.Board]:
    """The fixed positions and the random games' (not in check: these are the quiescence's moves)."""
    rng = random.Random(5)
    for fen in FENS:
        board = chess.Board(fen)
        for _ in range(30):  # a few random plies from each, as the search would reach
            if not board.is_check():
                yield board.copy()
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
    for board in random_game_boards(games=40, seed=41):
        if not board.is_check():
            yield board


def bitboards(board: chess.Board) -> tuple:
    black, white = board.occupied_co
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, black, white,
            board.turn)


def listed(out: np.ndarray, count: int) -> list[tuple[chess.Move, int, int, bool]]:
    return [(chess.Move(code & 63, (code >> 6) & 63, (code >> 12) & 7 or None), (entry >> ATTACKER_SHIFT) & TYPE_MASK,
             (entry >> VICTIM_SHIFT) & TYPE_MASK, bool(entry & GOOD_BIT))
            for entry in out[:count].tolist() for code in [entry & CODE_MASK]]


def test_capture_list_is_python_chess_captures_in_the_pickers_order() -> None:
    rng = random.Random(6)
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    checked = promotions = en_passant = bad = 0
    for board in boards():
        them = board.occupied_co[not board.turn]
        for mask in (chess.BB_ALL, them & rng.getrandbits(64), rng.getrandbits(64), 0):
            ep = -1 if board.ep_square is None else board.ep_square
            got = listed(out, capture_list_kernel(*bitboards(board), ep, mask, out))
            # The python-chess path it replaces, move for move: capture_moves and is_good_capture.
            expected = [(move, attacker, victim, is_good_capture(board, move, attacker, victim))
                        for move, attacker, victim in capture_moves(board, mask, pseudo=True)]
            assert got == expected, (board.fen(), hex(mask))
            # And what it is, from python-chess alone: the pseudo-legal captures onto the mask
            # (en passant onto it) and every promotion by a step.
            wanted = {move for move in board.generate_pseudo_legal_moves()
                      if (board.is_capture(move) and chess.BB_SQUARES[move.to_square] & mask)
                      or (move.promotion and not board.is_capture(move))}
            assert {move for move, _, _, _ in got} == wanted, (board.fen(), hex(mask))
            for move, attacker, victim, good in got:
                assert attacker == board.piece_type_at(move.from_square)
                if not move.promotion and attacker != chess.KING and chess.Board.is_capture(board, move):
                    assert good == see_ge(board, move, 0)
            checked += 1
            promotions += any(move.promotion for move, _, _, _ in got)
            en_passant += any(board.is_en_passant(move) for move, _, _, _ in got)
            bad += any(not good for _, _, _, good in got)
    assert checked > 2000 and promotions > 20 and en_passant > 3 and bad > 100


def reference_quiet_checks(board: chess.Board) -> list[chess.Move]:
    """The python-chess path quiet_checks_kernel replaces (Searcher._quiet_checks before it)."""
    us = board.turn
    movers = board.occupied_co[us] & ~board.kings & ~(board.pawns & PROMOTION_RANK[us])
    check_to, discoverers, reachers = check_masks_kernel(*bitboards(board))
    empty = ~board.occupied
    candidates = list(board.generate_pseudo_legal_moves(movers & reachers & ~discoverers, empty & check_to))
    if movers & discoverers:
        candidates.extend(board.generate_pseudo_legal_moves(movers & discoverers, empty))
    return [move for move in candidates if not board.is_en_passant(move) and board.gives_check(move)
            and see_ge(board, move, 0)]


def test_quiet_checks_are_the_quiet_checks_that_keep_the_piece_in_python_chess_order() -> None:
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    positions = found = 0
    for board in boards():
        count = quiet_checks_kernel(*bitboards(board), out)
        got = out[:count].tolist()
        assert got == [encode(move) for move in reference_quiet_checks(board)], board.fen()
        # Each a quiet, non-king move that checks, and no such move missing.
        every = {encode(move) for move in board.generate_pseudo_legal_moves()
                 if not board.is_capture(move) and not move.promotion and not board.is_castling(move)
                 and board.piece_type_at(move.from_square) != chess.KING and board.gives_check(move)
                 and see_ge(board, move, 0)}
        assert set(got) == every, board.fen()
        positions += 1
        found += count
    assert positions > 1000 and found > 300


def test_compiled_and_interpreted_kernels_agree() -> None:
    # The kernels run as plain Python under NUMBA_DISABLE_JIT=1 (every kernel has that fallback).
    fens = [board.fen() for index, board in enumerate(boards()) if index % 10 == 0]
    fens += [board.fen() for board in random_game_boards(games=10, seed=44) if board.is_check()]  # evasions
    code = (
        "import json, sys, chess\n"
        "import numpy as np\n"
        "from garfish.engine.board.captures import capture_list_kernel, evasion_order_kernel, quiet_checks_kernel,"
        " quiet_list_kernel\n"
        "out = np.empty(256, dtype=np.int64)\n"
        "history = (np.arange(8192, dtype=np.int64) * 7919) % 601 - 300\n"
        "cont1 = ((np.arange(384) * 7907) % 801 - 400).astype(np.int16)\n"
        "cont2 = ((np.arange(384) * 7901) % 501 - 250).astype(np.int16)\n"
        "results = []\n"
        "for fen in json.loads(sys.stdin.read()):\n"
        "    b = chess.Board(fen)\n"
        "    bits = (b.pawns, b.knights, b.bishops, b.rooks, b.queens, b.kings, b.occupied_co[0], b.occupied_co[1],"
        " b.turn)\n"
        "    n = capture_list_kernel(*bits, -1 if b.ep_square is None else b.ep_square, chess.BB_ALL, out)\n"
        "    captures = out[:n].tolist()\n"
        "    n = quiet_checks_kernel(*bits, out)\n"
        "    checks = out[:n].tolist()\n"
        "    n = quiet_list_kernel(*bits, 0, 0, 0, False, -1, -1, -1, -1, -1, history, cont1, cont2, out)\n"
        "    quiets = out[:n].tolist()\n"
        "    ep = -1 if b.ep_square is None else b.ep_square\n"
        "    good, quiet, n = evasion_order_kernel(*bits, ep, out) if b.is_check() else (0, 0, 0)\n"
        "    results.append([captures, checks, quiets, [good, quiet] + out[:n].tolist()])\n"
        "print(json.dumps(results))\n"
    )
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    history = (np.arange(8192, dtype=np.int64) * 7919) % 601 - 300  # the quiet kernel's sort keys ...
    cont1 = ((np.arange(384) * 7907) % 801 - 400).astype(np.int16)  # ... with the continuation histories'
    cont2 = ((np.arange(384) * 7901) % 501 - 250).astype(np.int16)
    expected = []
    for fen in fens:
        board = chess.Board(fen)
        ep = -1 if board.ep_square is None else board.ep_square
        count = capture_list_kernel(*bitboards(board), ep, chess.BB_ALL, out)
        captures = out[:count].tolist()
        count = quiet_checks_kernel(*bitboards(board), out)
        checks = out[:count].tolist()
        count = quiet_list_kernel(*bitboards(board), 0, 0, 0, False, -1, -1, -1, -1, -1, history, cont1, cont2, out)
        quiets = out[:count].tolist()
        # The evasion stages, for the boards in check.
        in_check = board.is_check()
        good, quiet, count = evasion_order_kernel(*bitboards(board), ep, out) if in_check else (0, 0, 0)
        expected.append([captures, checks, quiets, [good, quiet] + out[:count].tolist()])
    assert len(fens) > 100 and all(any(lists[i] for lists in expected) for i in range(3))
    assert any(len(lists[3]) > 2 for lists in expected)
    assert run_interpreted(code, fens) == expected


def test_quiescence_list_is_the_capture_list_of_the_pieces_worth_taking() -> None:
    # The mask the quiescence search once built in Python (the pieces of the kinds the flags say are
    # attacked and worth more than need, written out here; every capture with a pawn about to
    # promote), then capture_list_kernel's list for it; -1 for no piece.
    from garfish.engine.evaluation.classic import evaluate_kernel
    from garfish.engine.board.flags import (ATTACKS_BISHOP, ATTACKS_KNIGHT, ATTACKS_PAWN, ATTACKS_QUEEN, ATTACKS_ROOK,
                                      FLAGS_MASK, PROMOTION_FLAG)

    kinds = ((ATTACKS_PAWN, chess.PAWN), (ATTACKS_KNIGHT, chess.KNIGHT), (ATTACKS_BISHOP, chess.BISHOP),
             (ATTACKS_ROOK, chess.ROOK), (ATTACKS_QUEEN, chess.QUEEN))

    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    expected_out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    nothing = listed_some = 0
    for board in boards():
        flags = evaluate_kernel(*bitboards(board)) & FLAGS_MASK
        ep = -1 if board.ep_square is None else board.ep_square
        for need in (-100000, -50, 50, 150, 350, 600, 1000):
            count = quiescence_list_kernel(*bitboards(board), ep, flags, need, out)
            if flags & PROMOTION_FLAG:
                mask = chess.BB_ALL
            else:
                mask = 0
                for flag, kind in kinds:
                    if flags & flag and need < PIECE_VALUE[kind]:
                        mask |= board.pieces_mask(kind, chess.WHITE) | board.pieces_mask(kind, chess.BLACK)
                if not mask:
                    assert count == -1, board.fen()
                    nothing += 1
                    continue
                mask &= board.occupied_co[not board.turn]
            expected = capture_list_kernel(*bitboards(board), ep, mask, expected_out)
            assert out[:count].tolist() == expected_out[:expected].tolist(), (board.fen(), need)
            listed_some += count > 0
    assert nothing > 1000 and listed_some > 1000


def test_entry_points_give_the_kernels_results_without_the_dispatcher() -> None:
    # engine.board.bits.entry_point: the compiled overload's entry, the same results as the dispatcher.
    from garfish.engine.board.bits import entry_point
    from garfish.engine.board.zobrist import zobrist_kernel

    entry = entry_point(capture_list_kernel)
    assert entry is not capture_list_kernel and entry_point(lambda: 0).__name__ == "<lambda>"
    out = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    again = np.empty(MAX_LISTED_MOVES, dtype=np.int64)
    for board in list(boards())[:200]:
        ep = -1 if board.ep_square is None else board.ep_square
        count = entry(*bitboards(board), ep, chess.BB_ALL, out)
        assert out[:count].tolist() == again[:capture_list_kernel(*bitboards(board), ep, chess.BB_ALL, again)].tolist()
        key = entry_point(zobrist_kernel)(*bitboards(board), board.castling_rights, ep)
        assert key == zobrist_kernel(*bitboards(board), board.castling_rights, ep) == chess.polyglot.zobrist_hash(board)
