"""MultiPV in the Searcher: the best k root moves, each with its own exact score and PV, best first.
(Through a GUI, python-chess's analyse with multipv=k: test_uci_client.py.)"""

from __future__ import annotations

import chess
import chess.engine

from conftest import ENGINE_CMD, ROOT
from garfish.engine import Limits, Searcher
from garfish.engine.search.driver import SearchInfo
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.services.bench import run_bench

MIDDLEGAME = "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5"


# --------------------------------------------------------------------------- the searcher
def test_each_line_scores_as_its_remaining_moves_searched_alone() -> None:
    # Line 2 is the best of the root moves but line 1's: searched on its own (searchmoves), those
    # moves give the same move and about the same score (the TT's contents differ, so not exactly).
    board = chess.Board(MIDDLEGAME)
    result = Searcher(TranspositionTable(8)).search(board, Limits(depth=5, multipv=2))
    first, second = result.lines
    assert result.move == first.pv[0] and result.pv == first.pv and first.score == result.score
    rest = [move for move in board.legal_moves if move != first.pv[0]]
    alone = Searcher(TranspositionTable(8)).search(board, Limits(depth=5, searchmoves=rest))
    assert alone.move == second.pv[0]
    assert abs(alone.score - second.score) <= 30


def test_the_callback_gets_every_line_of_every_depth_in_rank_order() -> None:
    reports: list[SearchInfo] = []
    result = Searcher(TranspositionTable(8)).search(chess.Board(MIDDLEGAME), Limits(depth=4, multipv=3), on_info=reports.append)
    assert [(info.depth, info.multipv) for info in reports] == [(d, k) for d in range(1, 5) for k in (1, 2, 3)]
    assert all(info.bound == "exact" for info in reports)
    assert [(info.score, info.pv) for info in reports[-3:]] == [(line.score, line.pv) for line in result.lines]


def test_a_search_stopped_within_a_depth_reports_what_is_complete() -> None:
    # Where each line of each depth ends (nodes), from the same search to depth 5 unstopped.
    board = chess.Board(MIDDLEGAME)
    searcher = Searcher(TranspositionTable(8))
    ends: dict[tuple[int, int], int] = {}
    aspiration = searcher._aspiration

    def timed_aspiration(root: chess.Board, depth: int, prev: int, on_info: object, multipv: int = 1) -> int:
        score = aspiration(root, depth, prev, on_info, multipv)  # type: ignore[arg-type]
        ends[depth, multipv] = searcher.nodes
        return score

    searcher._aspiration = timed_aspiration  # type: ignore[method-assign]
    searcher.search(board, Limits(depth=5, multipv=3))
    # Stopped in line 1, 2 or 3 of depth 5: lines done at depth 5 come first, then depth 4's lines
    # for the ranks not reached (at depth 5 as an upper bound where depth 4 scored them higher than
    # the last line done), each move once, best first; bestmove is line 1.
    for done in range(3):
        nodes = ends[5, done] + 1 if done else ends[4, 3] + 1
        reports: list[SearchInfo] = []
        result = Searcher(TranspositionTable(8)).search(board, Limits(depth=5, multipv=3, nodes=nodes), on_info=reports.append)
        final = reports[-3:]
        assert [info.multipv for info in final] == [1, 2, 3] and result.depth == 4
        assert [info.depth for info in final[:done]] == [5] * done
        assert all(info.bound == "exact" for info in final[:done])
        assert all((info.depth, info.bound) in ((4, "exact"), (5, "upper")) for info in final[done:])
        assert [info.score for info in final] == sorted((info.score for info in final), reverse=True)
        moves = [info.pv[0] for info in final]
        assert len(set(moves)) == 3 and result.move == moves[0] == result.lines[0].pv[0]


def test_bench_with_multipv_1_is_the_plain_bench() -> None:
    plain = run_bench(depth=2)
    assert run_bench(depth=2, multipv=1).nodes == plain.nodes
    assert run_bench(depth=2, multipv=3).nodes > plain.nodes


# --------------------------------------------------------------------------- through python-chess
def test_analyse_always_ends_with_a_complete_sorted_set_of_lines() -> None:
    """engine.analyse(multipv=4) under time limits short and long, many runs: the lines a GUI is left
    with are multipv 1..4, four different moves, best first, each with its depth and score, and the
    bestmove is line 1 (a search stopped inside a depth once left lines 3-4 of the depth before,
    scoring above line 2). Whatever the machine's speed, the invariant holds: no timing is asserted."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, cwd=str(ROOT), timeout=60) as engine:
        for seconds in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0) * 3:
            infos = engine.analyse(board, chess.engine.Limit(time=seconds), multipv=4)
            assert [info["multipv"] for info in infos] == [1, 2, 3, 4], (seconds, infos)
            scores = [info["score"].white().score(mate_score=100_000) for info in infos]
            assert scores == sorted(scores, reverse=True), (seconds, infos)
            assert len({info["pv"][0] for info in infos}) == 4, (seconds, infos)
            assert all("depth" in info for info in infos), (seconds, infos)
            for info in infos[1:]:
                assert info["depth"] <= infos[0]["depth"] and not info.get("lowerbound"), (seconds, infos)
