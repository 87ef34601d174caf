"""Move picker, SEE, gives_check and perft: the engine's move paths against python-chess."""

from __future__ import annotations

import random
from typing import Iterable, Iterator, Optional

import chess
import numpy as np
import pytest

from garfish.engine.board.checks import gives_check
from garfish.engine.board.moves import MOVES_BY_CODE, decode, encode
from garfish.engine.board.see import see_ge
from garfish.engine.search.history import PIECE_TO
from garfish.perft.core import divide, perft
from garfish.perft.suites import read_suite, suite_files
from conftest import data_missing
from positions import random_game_boards
from kernel_picker import kernel_work, lazy_pick_moves, pick_moves
from reference_movepick import capture_moves, evasion_moves, is_good_capture, typed_captures
from reference_picker import PROMOTION_RANK, sort_quiets


def reference_order(board: chess.Board, tt_move: Optional[chess.Move], killers: tuple[Optional[chess.Move], ...],
                    history: np.ndarray) -> list[chess.Move]:
    """The legal moves in the picker's staged order, made with python-chess's legal generator: the
    TT move, good captures (MVV-LVA, SEE), killers, quiets (pieces en prise first, then by history),
    bad captures."""
    legal = list(board.legal_moves)
    order = [tt_move] if tt_move in legal else []
    good, bad = [], []
    for move, attacker, victim in capture_moves(board):
        if move not in order:
            (good if is_good_capture(board, move, attacker, victim) else bad).append(move)
    order += good
    for killer in killers:
        if (killer in legal and killer not in order and not killer.promotion  # type: ignore[union-attr]
                and not board.is_capture(killer)):  # type: ignore[arg-type]
            order.append(killer)  # type: ignore[arg-type]
    promoting = board.pawns & PROMOTION_RANK[board.turn]
    quiets = [m for m in legal if m not in order and not board.is_capture(m)
              and not chess.BB_SQUARES[m.from_square] & promoting]
    sort_quiets(board, quiets, history)
    return order + quiets + bad


def legal_picks(board: chess.Board, tt_move: Optional[chess.Move], killers: tuple[Optional[chess.Move], ...],
                history: np.ndarray, **hints: object) -> list[chess.Move]:
    """The picker's moves for the board, as the search sees them: the legal ones, in its order."""
    picked = list(pick_moves(board, tt_move, killers, history,  # type: ignore[arg-type]
                             in_check=board.is_check(), **hints))
    return [move for move in picked if board.is_legal(move)]


def test_picker_yields_every_legal_move_once_in_the_staged_order_with_any_hints() -> None:
    rng = random.Random(1)
    history = np.array([rng.randint(-500, 500) for _ in range(8192)], dtype=np.int64)
    for board in random_game_boards(games=40, seed=2):
        legal = list(board.legal_moves)
        foreign = chess.Move.from_uci("a1h8")
        tt_move = rng.choice(legal + [None, foreign])
        killers = (rng.choice(legal + [None, foreign]), rng.choice(legal + [None]))
        got = legal_picks(board, tt_move, killers, history)
        assert len(got) == len(set(got)) == len(legal), board.fen()
        assert set(got) == set(legal)
        if tt_move in legal:
            assert got[0] == tt_move
        assert got == reference_order(board, tt_move, killers, history), board.fen()


def test_picker_orders_winning_capture_first_and_losing_capture_last() -> None:
    # Pawn takes queen wins; queen takes a defended pawn loses.
    board = chess.Board("4k3/8/2p5/3p4/4P3/8/8/3QK3 w - - 0 1")
    board.set_piece_at(chess.D5, chess.Piece(chess.QUEEN, chess.BLACK))
    board.set_piece_at(chess.C6, chess.Piece(chess.PAWN, chess.BLACK))
    moves = legal_picks(board, None, (None, None), np.zeros(8192, dtype=np.int64))
    assert moves[0] == chess.Move.from_uci("e4d5")
    losing = chess.Board("4k3/8/2p5/3p4/8/8/8/3QK3 w - - 0 1")
    moves = legal_picks(losing, None, (None, None), np.zeros(8192, dtype=np.int64))
    assert moves[-1] == chess.Move.from_uci("d1d5")


@pytest.mark.parametrize(
    ("fen", "move", "threshold", "expected"),
    [
        ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", 0, True),
        ("4k3/8/2p5/3r4/4Q3/8/8/4K3 w - - 0 1", "e4d5", 0, False),
        ("4k3/8/2p5/3r4/4Q3/8/8/4K3 w - - 0 1", "e4d5", -450, True),
        ("3rk3/3r4/8/3r4/8/8/3R4/3RK3 w - - 0 1", "d2d5", 0, True),  # R for R, R for R: even
        ("3rk3/3r4/8/3r4/8/8/3R4/3RK3 w - - 0 1", "d2d5", 1, False),
        ("4k3/8/5n2/3b4/8/8/3R4/4K3 w - - 0 1", "d2d5", 0, False),  # rook for bishop
        ("4k3/8/8/3p4/8/8/8/3QK3 w - - 0 1", "d1d5", 0, True),
        ("4k3/8/8/8/8/8/3q4/3RK3 w - - 0 1", "d1d2", 0, True),  # x-ray: king recaptures safely
    ],
)
def test_static_exchange(fen: str, move: str, threshold: int, expected: bool) -> None:
    assert see_ge(chess.Board(fen), chess.Move.from_uci(move), threshold) is expected


def test_gives_check_matches_python_chess() -> None:
    count = 0
    for board in random_game_boards(games=25, seed=4):
        for move in board.legal_moves:
            assert gives_check(board, move) == board.gives_check(move), (board.fen(), move)
            count += 1
    assert count > 50000


def test_move_codes_round_trip() -> None:
    for board in random_game_boards(games=5, seed=8):
        for move in board.legal_moves:
            assert decode(encode(move)) == move
            assert encode(move) in MOVES_BY_CODE


def test_every_promotion_decodes_from_the_table_built_at_import() -> None:
    size = len(MOVES_BY_CODE)
    # Edge pawns of both sides step and capture onto the last rank: 4 moves, 4 pieces each.
    for fen in ("1n4n1/P6P/8/8/3k4/8/p6p/1N2K1N1 w - - 0 1", "1n4n1/P6P/8/8/3k4/8/p6p/1N2K1N1 b - - 0 1"):
        board = chess.Board(fen)
        promotions = [move for move in board.legal_moves if move.promotion]
        assert len(promotions) == 4 * 4
        for move in promotions:
            assert MOVES_BY_CODE[encode(move)] is decode(encode(move))
    assert len(MOVES_BY_CODE) == size


def test_perft_start_position_and_divide() -> None:
    board = chess.Board()
    assert perft(board, 3) == 8902
    split = dict(divide(board, 2))
    assert len(split) == 20 and sum(split.values()) == 400
    assert board.fen() == chess.STARTING_FEN


def test_perft_with_tt_and_killer_hints_counts_the_same() -> None:
    kiwipete = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    assert perft(kiwipete, 3, hints=True) == perft(kiwipete, 3) == 97862


@pytest.mark.parametrize("name", ["perftsuite.epd", "cpw_perft_positions.epd", "tricky_python_chess.epd",
                                  "perft_random_marcelk.epd"])
def test_perft_suites_at_small_depths(data, name: str) -> None:
    files = {p.name: p for p in suite_files(data)}
    if name not in files:
        data_missing(f"{name} not in the shared data")
    limit = {"perft_random_marcelk.epd": 80}.get(name)
    checked = 0
    for i, case in enumerate(read_suite(files[name])):
        if limit is not None and i >= limit:
            break
        board = case.board()
        for depth in sorted(case.counts):
            if case.counts[depth] > 20000:
                break
            assert perft(board, depth) == case.counts[depth], f"{name}:{case.line} D{depth} {case.fen}"
            checked += 1
    assert checked > 0


# Every 8th position of chess960_fischer.epd is also counted at depth 3. All 960 at depth 3 are
# 19.9M leaves (20.6M nodes with depths 1 and 2): 303 s here, 269 s of CPU (`./garfish perft
# --suite .../chess960_fischer.epd --max-depth 3 --max-nodes 100000000`; Chess960 boards make
# moves with python-chess's own push, 68-79k nodes/s), over four times the minute this test may
# take. Depths 1 and 2 of all 960 (0.72M nodes) take ~11 s of CPU, this depth-3 share (2.39M) ~30 s.
CHESS960_DEPTH3_STRIDE = 8


@pytest.mark.slow
def test_chess960_suite_through_the_engine_move_path(data) -> None:
    """All 960 positions (one per Chess960 start setup, a few moves into a game, castling
    rights mostly kept) at depths 1 and 2, and every CHESS960_DEPTH3_STRIDE-th at depth 3, through
    the engine's own move path (perft/core.py: the staged picker and make_move as the search walks them)."""
    path = data / "perft" / "chess960_fischer.epd"
    if not path.is_file():
        data_missing(f"{path} not in the shared data")
    cases = list(read_suite(path))
    assert len(cases) == 960 and all(case.chess960 for case in cases)
    castling_roots = 0
    for index, case in enumerate(cases):
        board = case.board()
        castling_roots += any(board.is_castling(move) for move in board.legal_moves)
        for depth in (1, 2, 3) if index % CHESS960_DEPTH3_STRIDE == 0 else (1, 2):
            assert perft(board, depth) == case.counts[depth], f"{path.name}:{case.line} D{depth} {case.fen}"
    assert castling_roots > 100  # the suite does castle at the root, not only deeper


def test_check_restricted_picker_yields_all_checks_and_no_duplicates() -> None:
    from garfish.engine.board.checks import check_masks_kernel

    for board in random_game_boards(games=30, seed=12):
        black, white = board.occupied_co
        masks = check_masks_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                                   board.kings, black, white, board.turn)
        if board.is_check():
            continue  # the search restricts the quiets only out of check
        got = legal_picks(board, None, (None, None), np.zeros(8192, dtype=np.int64),
                          check_masks=tuple(int(m) for m in masks))
        legal = set(board.legal_moves)
        assert len(got) == len(set(got)) and set(got) <= legal, board.fen()
        wanted = {m for m in legal if board.is_capture(m) or m.promotion
                  or (board.gives_check(m) and board.piece_type_at(m.from_square) != chess.KING)}
        assert wanted <= set(got), (board.fen(), wanted - set(got))


def test_attackers_kernel_equals_python_chess_attacks() -> None:
    from garfish.engine.board.checks import attackers_kernel

    rng = random.Random(4)
    checked = 0
    for board in random_game_boards(games=20, seed=31):
        black, white = board.occupied_co
        for targets in (board.occupied_co[not board.turn], rng.getrandbits(64), chess.BB_SQUARES[rng.randrange(64)]):
            expected = 0
            for square in chess.scan_forward(board.occupied_co[board.turn]):
                if board.attacks_mask(square) & targets:
                    expected |= chess.BB_SQUARES[square]
            got = attackers_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                                   board.kings, black, white, board.turn, targets)
            assert got == expected, (board.fen(), hex(targets))
            checked += 1
    assert checked > 1000


def test_capture_generation_restricted_to_attackers_misses_nothing() -> None:
    for board in random_game_boards(games=20, seed=32):
        expected = {m for m in board.legal_moves if board.is_capture(m) or m.promotion}
        records = capture_moves(board)
        got = [move for move, _, _ in records]
        assert len(got) == len(set(got)) and set(got) == expected, board.fen()
        for move, attacker, victim in records:
            assert attacker == board.piece_type_at(move.from_square)
            # En passant and a promotion onto an empty square count as taking a pawn.
            assert victim == (board.piece_type_at(move.to_square) or chess.PAWN)


def test_threats_kernel_finds_pieces_en_prise() -> None:
    from garfish.engine.board.checks import threats_kernel

    rank = {chess.PAWN: 1, chess.KNIGHT: 2, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4, chess.KING: 5}
    found = 0
    for board in random_game_boards(games=20, seed=33):
        us = board.turn
        expected = 0
        for square in chess.scan_forward(board.occupied_co[us] & ~board.pawns & ~board.kings):
            kind = rank[board.piece_type_at(square)]
            attackers = [rank[board.piece_type_at(a)] for a in board.attackers(not us, square)]
            if attackers and (min(attackers) < kind or not board.attackers(us, square)):
                expected |= chess.BB_SQUARES[square]
        black, white = board.occupied_co
        got = threats_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                             black, white, us)
        assert got == expected, board.fen()
        found += expected != 0
    assert found > 100


def test_quiet_moves_of_a_piece_en_prise_come_first() -> None:
    # The black knight on b7 is attacked by the bishop on e4 and undefended: its moves lead the quiets.
    board = chess.Board("4b1k1/pn3pbp/6p1/8/2p1B3/2P3B1/PP3PPP/6K1 b - - 1 4")
    history = np.zeros(8192, dtype=np.int64)
    history[4096 * 0 + chess.H7 * 64 + chess.H5] = 5000  # a quiet move with a big history score
    moves = legal_picks(board, None, (None, None), history)
    quiets = [m for m in moves if not board.is_capture(m)]
    knight_moves = {m for m in quiets if m.from_square == chess.B7}
    assert set(quiets[:len(knight_moves)]) == knight_moves


def test_in_check_flag_equals_python_chess() -> None:
    from garfish.engine.evaluation.classic import IN_CHECK_FLAG, evaluate_packed

    checks = 0
    for board in random_game_boards(games=30, seed=34):
        got = bool(evaluate_packed(board) & IN_CHECK_FLAG)
        assert got == board.is_check(), board.fen()
        checks += got
    assert checks > 50


def test_evaluation_flags_tell_illegal_moves_and_checks() -> None:
    from garfish.engine.evaluation.classic import ILLEGAL_FLAG, IN_CHECK_FLAG, evaluate_kernel

    boards = list(random_game_boards(games=25, seed=36))
    # Kings next to each other: a king step that only the other king forbids.
    boards += [chess.Board("8/8/8/8/8/8/6k1/4K2R w K - 0 1"), chess.Board("8/8/8/3k4/8/3K4/8/8 w - - 0 1")]
    illegal = checks = 0
    for board in boards:
        for move in board.generate_pseudo_legal_moves():
            legal = board.is_legal(move)
            board.push(move)
            black, white = board.occupied_co
            packed = evaluate_kernel(board.pawns, board.knights, board.bishops, board.rooks, board.queens,
                                     board.kings, black, white, board.turn)
            assert bool(packed & ILLEGAL_FLAG) == (not legal), (board.fen(), move.uci())
            if legal:
                assert bool(packed & IN_CHECK_FLAG) == board.is_check(), (board.fen(), move.uci())
                checks += bool(packed & IN_CHECK_FLAG)
            board.pop()
            illegal += not legal
    assert illegal > 100 and checks > 100


def test_pseudo_legal_picker_yields_every_pseudo_legal_move_once() -> None:
    rng = random.Random(37)
    history = np.array([rng.randint(-500, 500) for _ in range(8192)], dtype=np.int64)
    for board in random_game_boards(games=30, seed=37):
        if board.is_check():
            continue
        pseudo = list(board.generate_pseudo_legal_moves())
        tt_move = rng.choice(pseudo + [None, chess.Move.from_uci("a1h8")])
        killers = (rng.choice(pseudo + [None]), rng.choice(pseudo + [None]))
        # The search's board: its capture stage lists captures with engine.board.captures' kernel.
        got = list(pick_moves(board, tt_move, killers, history))
        assert len(got) == len(set(got)) == len(pseudo), board.fen()
        assert set(got) == set(pseudo)
        legal_order = [m for m in got if board.is_legal(m)]
        assert legal_order == reference_order(board, tt_move, killers, history), board.fen()


def test_evasion_picker_matches_the_staged_order_in_check() -> None:
    rng = random.Random(38)
    history = np.array([rng.randint(-500, 500) for _ in range(8192)], dtype=np.int64)
    in_check = extra = 0
    for board in random_game_boards(games=60, seed=38):
        if not board.is_check():
            continue
        in_check += 1
        legal = list(board.legal_moves)
        tt_move = rng.choice(legal + [None, chess.Move.from_uci("a1h8")])
        killers = (rng.choice(legal + [None]), rng.choice(legal + [None]))
        got = list(pick_moves(board, tt_move, killers, history, in_check=True))
        # Pseudo-legal: every legal move once, in the staged picker's order, plus moves of pinned
        # pieces that the search's legality test rejects, all of them pseudo-legal. King steps
        # go only to squares the enemy does not attack.
        assert len(got) == len(set(got)), board.fen()
        assert all(board.is_pseudo_legal(m) for m in got)
        king = board.king(board.turn)
        assert all(board.is_legal(m) for m in got if m.from_square == king), board.fen()
        assert [m for m in got if board.is_legal(m)] == reference_order(board, tt_move, killers, history)
        extra += len(got) - len(legal)
    assert in_check > 20 and extra >= 1  # a pinned piece's interposition or capture came through


def reference_quiets(board: chess.Board, tt_move: Optional[chess.Move], killers: tuple[Optional[chess.Move], ...],
                     history: np.ndarray, check_masks: Optional[tuple[int, int, int]],
                     continuation: Optional[tuple[np.ndarray, np.ndarray]] = None) -> list[chess.Move]:
    """The picker's first stages up to its quiet moves, made with python-chess's generators (the
    picker's Python path before engine.board.captures.quiet_list_kernel): the TT move if pseudo-legal,
    the killers that are pseudo-legal quiet moves, then the quiet moves python-chess generates
    (only the possible checks under check_masks), without those and en passant, by sort_quiets."""
    order: list[chess.Move] = [tt_move] if tt_move is not None and board.is_pseudo_legal(tt_move) else []
    for killer in killers:
        if (killer is not None and killer not in order and not killer.promotion and not board.is_capture(killer)
                and board.is_pseudo_legal(killer)):
            order.append(killer)
    us = board.turn
    movers = board.occupied_co[us] & ~(board.pawns & PROMOTION_RANK[us])
    targets = ~board.occupied_co[not us]
    if check_masks is None:
        generated = list(board.generate_pseudo_legal_moves(movers, targets))
    else:
        check_to, discoverers, reachers = check_masks
        movers &= ~board.kings
        generated = list(board.generate_pseudo_legal_moves(movers & reachers & ~discoverers, targets & check_to))
        generated += board.generate_pseudo_legal_moves(movers & discoverers, targets)
    quiets = [move for move in generated if move not in order and not board.is_en_passant(move)]
    sort_quiets(board, quiets, history, continuation)
    return order + quiets


def random_continuation(scores: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two continuation history rows (the moves one and two plies before), half their entries 0."""
    return tuple(  # type: ignore[return-value]
        (scores.integers(-16000, 16001, PIECE_TO) * scores.integers(0, 2, PIECE_TO)).astype(np.int16)
        for _ in range(2))


def check_quiet_stage(boards: Iterable[chess.Board], seed: int) -> tuple[int, int, int, int]:
    """Compare the picker's quiet stage (quiet_list_kernel: python-chess's generation order,
    castling from python-chess, sorted by history with pieces en prise first, the TT move and
    killers left out) with reference_quiets, move for move, over random histories and hints, a
    third of the positions under the check masks; (positions, with castling, Chess960, masked)."""
    from garfish.engine.board.checks import check_masks_kernel

    rng = random.Random(seed)
    scores = np.random.default_rng(seed)
    checked = castles = chess960 = masked = 0
    for board in boards:
        if board.is_check():
            continue  # in check the picker takes its evasions (pick_evasions)
        # Half the entries 0 (ties keep python-chess's order), the others -3000..3000.
        history = scores.integers(-3000, 3001, 8192) * scores.integers(0, 2, 8192)
        pseudo = list(board.generate_pseudo_legal_moves())
        quiet = [m for m in pseudo if not board.is_capture(m) and not m.promotion]
        tt_move = rng.choice(pseudo + quiet + [None, chess.Move.from_uci("a1h8")])
        killers = (rng.choice(quiet + [None]), rng.choice(quiet + [None]))
        masks: Optional[tuple[int, int, int]] = None
        if rng.random() < 0.3:
            black, white = board.occupied_co
            check_to, discoverers, reachers = check_masks_kernel(
                board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, black, white,
                board.turn)
            masks = (int(check_to), int(discoverers), int(reachers))
            masked += 1
        continuation = random_continuation(scores) if rng.random() < 0.5 else None
        got = list(pick_moves(board, tt_move, killers, history, capture_targets=0,
                              check_masks=masks, continuation=continuation))
        assert got == reference_quiets(board, tt_move, killers, history, masks, continuation), board.fen()
        checked += 1
        castles += any(board.is_castling(m) for m in got)
        chess960 += board.chess960
    return checked, castles, chess960, masked


def test_quiet_kernel_lists_python_chess_quiets_in_the_sorted_order() -> None:
    checked, castles, _, masked = check_quiet_stage(random_game_boards(games=40, seed=41), seed=41)
    assert checked > 1000 and castles > 50 and masked > 300


def test_quiet_kernel_on_every_perft_suite_position(data) -> None:
    """The same comparison on every position of the perft suites, standard and Chess960."""
    boards = (case.board() for path in suite_files(data) for case in read_suite(path))
    checked, castles, chess960, masked = check_quiet_stage(boards, seed=42)
    assert checked > 7000 and castles > 150 and chess960 > 900 and masked > 300


def reference_evasions(board: chess.Board, tt_move: Optional[chess.Move], killers: tuple[Optional[chess.Move], ...],
                       history: np.ndarray,
                       continuation: Optional[tuple[np.ndarray, np.ndarray]] = None) -> list[chess.Move]:
    """The evasion picker's stages made with python-chess (its Python path before
    engine.board.captures.evasion_order_kernel): the TT move if pseudo-legal, then evasion_moves' list
    without it split into captures and promotions (typed_captures, is_good_capture) and quiet moves
    (the killers among them first, then sort_quiets), the losing captures last."""
    order: list[chess.Move] = []
    if tt_move is not None and board.is_pseudo_legal(tt_move):
        order.append(tt_move)
    else:
        tt_move = None
    captures, quiets = [], []
    for move in evasion_moves(board):
        if move != tt_move:
            (captures if move.promotion or board.is_capture(move) else quiets).append(move)
    bad = []
    for move, attacker, victim in typed_captures(board, captures):
        (order if is_good_capture(board, move, attacker, victim) else bad).append(move)
    for killer in killers:
        if killer is not None and killer in quiets:
            quiets.remove(killer)
            order.append(killer)
    sort_quiets(board, quiets, history, continuation)
    return order + quiets + bad


def test_evasion_kernel_gives_python_chess_evasions_in_the_staged_order(data) -> None:
    """pick_evasions (evasion_order_kernel) against reference_evasions, move for move (pseudo-legal
    moves included), on every position in check of the perft suites (standard and Chess960) and
    of 200 random games, with random histories, TT moves and killers."""
    rng = random.Random(43)
    scores = np.random.default_rng(43)
    boards = [case.board() for path in suite_files(data) for case in read_suite(path)]
    boards += random_game_boards(games=200, seed=43)
    checked = captures = 0
    for board in boards:
        if not board.is_check():
            continue
        history = scores.integers(-3000, 3001, 8192) * scores.integers(0, 2, 8192)
        pseudo = list(board.generate_pseudo_legal_moves())
        tt_move = rng.choice(pseudo + [None, chess.Move.from_uci("a1h8")])
        killers = (rng.choice(pseudo + [None]), rng.choice(pseudo + [None]))
        continuation = random_continuation(scores) if rng.random() < 0.5 else None
        got = list(pick_moves(board, tt_move, killers, history, in_check=True, continuation=continuation))
        assert got == reference_evasions(board, tt_move, killers, history, continuation), board.fen()
        checked += 1
        captures += any(board.is_capture(m) for m in got)
    assert checked > 500 and captures > 200


def lazy_reference(board: chess.Board, tt_move: Optional[chess.Move], killers: tuple[Optional[chess.Move], ...],
                   history: np.ndarray) -> Iterator[chess.Move]:
    """The picker's stages made with python-chess, each listed only when it is reached, as the
    picker lists them: the quiet moves are sorted by the history as it is then (the searches of the
    moves before them update it)."""
    if tt_move is not None and board.is_pseudo_legal(tt_move):
        yield tt_move
    else:
        tt_move = None
    if board.is_check():
        captures, quiets = [], []
        for move in evasion_moves(board):
            if move != tt_move:
                (captures if move.promotion or board.is_capture(move) else quiets).append(move)
        records = typed_captures(board, captures)
    else:
        records = [record for record in capture_moves(board, pseudo=True) if record[0] != tt_move]
        quiets = []
    bad = []
    for move, attacker, victim in records:
        if is_good_capture(board, move, attacker, victim):
            yield move
        else:
            bad.append(move)
    if board.is_check():
        for killer in killers:
            if killer is not None and killer in quiets:
                quiets.remove(killer)
                yield killer
    else:
        yielded = [tt_move] if tt_move is not None else []
        for killer in killers:
            if (killer is not None and killer not in yielded and not killer.promotion
                    and not board.is_capture(killer) and board.is_pseudo_legal(killer)):
                yielded.append(killer)
                yield killer
        us = board.turn
        movers = board.occupied_co[us] & ~(board.pawns & PROMOTION_RANK[us])
        quiets = [move for move in board.generate_pseudo_legal_moves(movers, ~board.occupied_co[not us])
                  if move not in yielded and not board.is_en_passant(move)]
    sort_quiets(board, quiets, history)
    yield from quiets
    yield from bad


@pytest.mark.slow  # both pickers over 60 random games, the history changed at every move
def test_quiet_moves_are_sorted_by_the_history_when_the_picker_reaches_them() -> None:
    """The history changes between the picker's moves (each one's search updates it): the quiet
    moves, in and out of check, follow it as it is when their stage is reached, as the Python
    stages did (a kernel that sorted the evasions' quiets at once changed the tree at depth 12)."""
    rng = random.Random(45)
    compared = in_check = 0
    for board in random_game_boards(games=60, seed=45):
        legal = list(board.legal_moves)
        quiet = [m for m in legal if not board.is_capture(m) and not m.promotion]
        if len(quiet) < 2:
            continue
        tt_move = rng.choice(legal + [None])
        killers = (rng.choice(quiet + [None]), rng.choice(quiet + [None]))
        start = np.array([rng.randint(-2000, 2000) for _ in range(8192)], dtype=np.int64)
        orders = []
        for picker in (lambda h: lazy_pick_moves(board, tt_move, killers, h),
                       lambda h: lazy_reference(board, tt_move, killers, h)):
            history = start.copy()
            changes = random.Random(compared)  # the same changes for both pickers
            order = []
            for move in picker(history):
                order.append(move)
                for _ in range(40):  # as a search of the move would: rewards and penalties
                    history[changes.randrange(8192)] += changes.randint(-4000, 4000)
            orders.append(order)
        assert orders[0] == orders[1], board.fen()
        compared += 1
        in_check += board.is_check()
    assert compared > 1000 and in_check > 30


def test_a_quiet_move_that_cut_off_after_a_move_goes_first_after_it_again() -> None:
    """cont_update rewards the cut-off move in the rows of the moves one and two plies before and
    punishes the quiet moves tried before it; the picker, given those rows, then sorts it first among
    the quiet moves, and the moves tried before it last, where the butterfly history is equal."""
    from garfish.engine.search.history import CONT_ROWS, HISTORY_MAX, NO_CONTINUATION
    from garfish.engine.search.movepick import cont_update

    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    work = kernel_work(board)
    cont = np.zeros((CONT_ROWS, PIECE_TO), dtype=np.int16)
    cut, tried = chess.Move.from_uci("b1c3"), [chess.Move.from_uci("a2a3"), chess.Move.from_uci("f1e2")]
    tried_codes = np.array([encode(move) for move in tried], dtype=np.int64)
    row1, row2 = 100, 500  # any rows: the moves before
    for _ in range(30):
        cont_update(cont, row1, row2, work.pos, 0, encode(cut), tried_codes, len(tried), 1200)
        cont_update(cont, row1, NO_CONTINUATION, work.pos, 0, encode(cut), tried_codes, 0, 1200)
    assert not cont[NO_CONTINUATION].any()  # the row of no move stays zero
    assert 0 < cont[row1, 1 * 64 + chess.C3] <= HISTORY_MAX and 0 < cont[row2, 1 * 64 + chess.C3]
    assert -HISTORY_MAX <= cont[row1, 0 * 64 + chess.A3] < 0 and cont[row2, 2 * 64 + chess.E2] < 0
    history = np.zeros(8192, dtype=np.int64)
    plain = [m for m in pick_moves(board, None, (None, None), history) if not board.is_capture(m)]
    got = [m for m in pick_moves(board, None, (None, None), history, continuation=(cont[row1], cont[row2]))
           if not board.is_capture(m)]
    assert plain[0] != cut and got[0] == cut
    assert set(got[-2:]) == set(tried) and set(plain) == set(got)
