"""Strength limiting (UCI_Elo): the mapping, the choice among MultiPV lines, and the weakened search."""

from __future__ import annotations

import random
from typing import Optional

import chess
import pytest

import garfish.engine.search.driver
from garfish.engine import Limits, Searcher
from garfish.engine.search.timeman import time_budget
from garfish.engine.search.tt import TranspositionTable
from garfish.engine.services.bench import BENCH_FENS
from garfish.engine.search.skill import (
    CALIBRATION, ELO_MAX, ELO_MIN, KNEE_STRENGTH, MARGIN_AT_KNEE, MARGIN_AT_MIN, MISS_AT_KNEE, MISS_AT_MIN,
    NODES_AT_MIN, SKILL_LEVEL_MAX, SKILL_MULTIPV, STRENGTH_FULL, STRENGTH_MIN, STRENGTH_PER_DOUBLING,
    TOP_PER_DOUBLING, TOP_STRENGTH, Skill, margin_at, miss_at, nodes_at, skill_level_elo, strength_at,
)
from garfish.engine.types import MATE_BOUND, mate_in, mated_in

from clocks import SteppingClock

# White's queen on d4 is attacked by the pawn on c5: every move but a queen move drops it.
QUEEN_EN_PRISE = "rnbqkbnr/pp1ppppp/8/2p5/3Q4/8/PPP1PPPP/RNB1KBNR w KQkq - 0 3"
QUEEN = chess.D4


def read_fens(path) -> list[str]:
    """The FENs of a FEN-list file."""
    return [line.strip() for line in open(path, encoding="utf-8") if line.strip()]


def elo_for(strength: float) -> int:
    """The UCI_Elo that plays at this strength of the knob (CALIBRATION inverted), clamped to the
    range: the tests name the knob's settings, which stay put when the table is fitted again."""
    for (low_elo, low), (high_elo, high) in zip(CALIBRATION, CALIBRATION[1:]):
        if strength <= high:
            return max(ELO_MIN, round(low_elo + (high_elo - low_elo) * (strength - low) / (high - low)))
    return ELO_MAX


# --------------------------------------------------------------------------- the mapping
def test_the_calibration_runs_from_stockfish_s_floor_to_the_full_engine() -> None:
    ratings, strengths = [elo for elo, _ in CALIBRATION], [strength for _, strength in CALIBRATION]
    assert ratings == sorted(set(ratings)) and strengths == sorted(strengths)
    assert (ELO_MIN, ELO_MAX) == (1350, ratings[-1]) and strengths[-1] == STRENGTH_FULL >= strengths[0] >= STRENGTH_MIN
    for (low_elo, low), (high_elo, high) in zip(CALIBRATION, CALIBRATION[1:]):
        assert strength_at(low_elo) == low and strength_at(high_elo) == high
        assert strength_at((low_elo + high_elo) / 2) == pytest.approx((low + high) / 2)
    assert strength_at(ELO_MIN - 300) == strengths[0] and strength_at(ELO_MAX + 300) == STRENGTH_FULL
    assert Skill(ELO_MAX).nodes is None and Skill(ELO_MAX - 1).nodes is not None
    assert all(elo_for(strength_at(elo)) == elo for elo in range(ELO_MIN, ELO_MAX + 1, 10))


def test_skill_level_plays_at_stockfish_s_elo_for_the_level_and_20_is_the_full_engine() -> None:
    # Stockfish 15.1's search.cpp: level = ((uci_elo - 1346.6) / 143.4) ** (1 / 0.806), inverted.
    elos = [skill_level_elo(level) for level in range(SKILL_LEVEL_MAX + 1)]
    assert elos[0] == ELO_MIN and elos[SKILL_LEVEL_MAX] is None
    limited = [elo for elo in elos if elo is not None]
    assert limited == sorted(set(limited)) and elos[:len(limited)] == limited  # rising, then the full engine
    for level, elo in enumerate(limited[1:], 1):
        assert elo == round(1346.6 + 143.4 * level ** 0.806) < ELO_MAX
    assert all(round(1346.6 + 143.4 * level ** 0.806) >= ELO_MAX for level in range(len(limited), SKILL_LEVEL_MAX))
    assert skill_level_elo(-3) == ELO_MIN and skill_level_elo(99) is None


def test_the_mapping_weakens_steadily_as_the_elo_falls() -> None:
    skills = [Skill(elo) for elo in [*range(ELO_MIN, ELO_MAX, 50), ELO_MAX]]
    nodes = [skill.nodes for skill in skills[:-1]]
    assert skills[-1].elo == ELO_MAX and skills[-1].nodes is None  # the top of the range: the full search
    margins = [skill.margin for skill in skills]
    misses = [skill.miss_chance for skill in skills]
    assert nodes == sorted(set(nodes))  # strictly more nodes with every step up
    assert margins == sorted(margins, reverse=True) and margins[0] > margins[-1] >= 0
    assert misses == sorted(misses, reverse=True) and 0 <= misses[-1] < misses[0] < 1
    # Alternatives are searched only while one may be played.
    assert [skill.lines for skill in skills] == [SKILL_MULTIPV if skill.miss_chance > 0 else 1 for skill in skills]
    assert Skill(ELO_MAX - 1).lines == SKILL_MULTIPV and Skill(ELO_MAX).lines == 1
    # Beyond the range, the ends of the range.
    assert Skill(ELO_MIN - 500).nodes == Skill(ELO_MIN).nodes and Skill(ELO_MAX + 500).margin == Skill(ELO_MAX).margin


def test_the_choice_ramps_through_the_knee_without_a_jump() -> None:
    # The ends and the knee are where the constants say, and neighbouring strengths differ little.
    assert (margin_at(STRENGTH_MIN), miss_at(STRENGTH_MIN)) == (MARGIN_AT_MIN, MISS_AT_MIN)
    assert (margin_at(KNEE_STRENGTH), miss_at(KNEE_STRENGTH)) == (MARGIN_AT_KNEE, pytest.approx(MISS_AT_KNEE))
    assert (margin_at(STRENGTH_FULL), miss_at(STRENGTH_FULL), nodes_at(STRENGTH_FULL)) == (0, 0, None)
    for strength in range(STRENGTH_MIN, STRENGTH_FULL):
        assert 0 <= margin_at(strength) - margin_at(strength + 1) <= 2
        assert 0 <= miss_at(strength) - miss_at(strength + 1) < 0.002
        assert nodes_at(strength) <= nodes_at(strength + 1) if strength + 1 < STRENGTH_FULL else True
    # Below the knee the choice weakens faster per step than above it.
    below = (margin_at(STRENGTH_MIN) - margin_at(KNEE_STRENGTH)) / (KNEE_STRENGTH - STRENGTH_MIN)
    above = (margin_at(KNEE_STRENGTH) - margin_at(STRENGTH_FULL)) / (STRENGTH_FULL - KNEE_STRENGTH)
    assert below > above


def test_the_node_budget_climbs_to_the_full_engine_without_a_cliff() -> None:
    # Up to TOP_STRENGTH a doubling every STRENGTH_PER_DOUBLING, then every TOP_PER_DOUBLING, with
    # no jump where the two meet; just below the top the budget is past what the full engine
    # searches in a move at 10+0.1 (about 100,000 nodes here), so the knob ends near the full engine.
    assert nodes_at(TOP_STRENGTH) == int(NODES_AT_MIN * 2 ** ((TOP_STRENGTH - STRENGTH_MIN) / STRENGTH_PER_DOUBLING))
    assert nodes_at(TOP_STRENGTH - STRENGTH_PER_DOUBLING) == pytest.approx(nodes_at(TOP_STRENGTH) / 2, abs=1)
    assert nodes_at(TOP_STRENGTH + TOP_PER_DOUBLING) == pytest.approx(2 * nodes_at(TOP_STRENGTH), abs=1)
    assert nodes_at(TOP_STRENGTH + 4 * TOP_PER_DOUBLING) == pytest.approx(16 * nodes_at(TOP_STRENGTH), abs=16)
    assert 1.0 < nodes_at(TOP_STRENGTH + 1) / nodes_at(TOP_STRENGTH) < 1.05
    assert nodes_at(STRENGTH_FULL - 20) > 200_000 and nodes_at(STRENGTH_FULL) is None


def test_choose_stays_within_the_margin_and_keeps_mates() -> None:
    rng = random.Random(1)
    for elo in (ELO_MIN, elo_for(1500), elo_for(1900), ELO_MAX):
        skill = Skill(elo)
        for _ in range(300):
            scores = sorted((rng.randint(-400, 400) for _ in range(SKILL_MULTIPV)), reverse=True)
            assert scores[0] - scores[skill.choose(scores, rng)] <= skill.margin
            # A mate is never given up, whatever the others score.
            assert skill.choose([mate_in(5), scores[0], scores[1]], rng) == 0
            # A line that is mated is never chosen over one that is not (even a close mate score).
            assert skill.choose([scores[0], scores[0] - 1, mated_in(9), mated_in(3)], rng) in (0, 1)


def test_choose_strays_from_the_best_line_less_as_the_elo_rises() -> None:
    scores = [30, 20, 10, -10]  # four lines within any margin
    strays = {}
    low, middle, high = elo_for(1000), elo_for(1600), elo_for(1900)
    for elo in (low, middle, high):
        rng = random.Random(7)
        strays[elo] = sum(Skill(elo).choose(scores, rng) != 0 for _ in range(2000)) / 2000
    assert strays[low] > 0.3 and strays[high] < 0.15 and strays[low] > strays[middle] > strays[high]
    # The same seed, the same choices.
    first, second = random.Random(5), random.Random(5)
    assert [Skill(ELO_MIN).choose(scores, first) for _ in range(50)] == [Skill(ELO_MIN).choose(scores, second)
                                                                        for _ in range(50)]


# --------------------------------------------------------------------------- the search
def test_the_same_seed_plays_the_same_moves() -> None:
    def moves(seed: int) -> list[chess.Move]:
        searcher = Searcher(TranspositionTable(4), seed=seed)
        found = []
        for fen in BENCH_FENS[:12]:
            searcher.tt.clear()
            searcher.new_game()
            found.append(searcher.search(chess.Board(fen), Limits(elo=elo_for(1100))).move)
        return found

    assert moves(3) == moves(3)
    assert moves(3) != moves(4)  # the seed does choose


def test_at_the_lowest_elo_moves_are_legal_quick_and_never_miss_a_mate_in_one(data) -> None:
    budget = Skill(ELO_MIN).nodes
    for seed in range(3):
        searcher = Searcher(TranspositionTable(4), seed=seed)
        for fen in read_fens(data / "mates" / "mate1.fen"):
            board = chess.Board(fen)
            searcher.tt.clear()
            searcher.new_game()
            result = searcher.search(board, Limits(wtime=60, btime=60, elo=ELO_MIN))
            assert result.move in board.legal_moves and result.score >= MATE_BOUND
            board.push(result.move)
            assert board.is_checkmate(), fen
            # A minute on the clock, yet a small search: depth 1 always completes; after it the
            # budget binds (counted in nodes, not timed: a busy machine takes longer over them).
            assert result.nodes <= budget or result.depth == 1


def test_the_best_line_is_played_far_more_often_at_1900_than_at_1000() -> None:
    def strayed(elo: int, nodes: Optional[int]) -> float:
        """The share of searches whose move is not their own line 1."""
        count = total = 0
        for seed in range(2):
            searcher = Searcher(TranspositionTable(4), seed=seed)
            for fen in BENCH_FENS:
                searcher.tt.clear()
                searcher.new_game()
                result = searcher.search(chess.Board(fen), Limits(elo=elo, nodes=nodes))
                count += result.move != result.lines[0].pv[0]
                total += 1
        return count / total

    low = strayed(elo_for(1000), None)
    high = strayed(elo_for(1900), 2000)  # a node cap of our own keeps the test short; the choice is 1900's
    assert low >= 0.15 and high <= low / 3, (low, high)


def test_the_nodes_per_move_shrink_with_the_elo() -> None:
    totals = []
    bottom = CALIBRATION[0][1]  # the weakest strength the range reaches
    for elo in (elo_for(bottom + (STRENGTH_FULL - bottom) * step / 5) for step in range(4)):
        searcher = Searcher(TranspositionTable(4), seed=0)
        total = 0
        for fen in BENCH_FENS[:8]:
            searcher.tt.clear()
            searcher.new_game()
            total += searcher.search(chess.Board(fen), Limits(elo=elo)).nodes
        totals.append(total)
    assert totals == sorted(set(totals)), totals


@pytest.mark.parametrize("elo", [elo_for(1800), elo_for(1900), ELO_MAX])
def test_a_queen_en_prise_is_never_left_at_1800_and_above(elo: int) -> None:
    board = chess.Board(QUEEN_EN_PRISE)
    result = Searcher(TranspositionTable(4), seed=elo).search(board, Limits(elo=elo, nodes=8000))  # a cap of our own: a short test
    assert result.move is not None and result.move.from_square == QUEEN
    # Whatever the draw, no line that leaves the queen is within the margin.
    skill, rng = Skill(elo), random.Random(elo)
    scores = [line.score for line in result.lines]
    assert len(scores) == (SKILL_MULTIPV if elo < ELO_MAX else 1)  # one line where line 1 is always played
    assert all(result.lines[skill.choose(scores, rng)].pv[0].from_square == QUEEN for _ in range(500))


def test_a_limited_engine_still_obeys_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    board = chess.Board(BENCH_FENS[1])
    limits = Limits(wtime=0.5, btime=0.5, elo=ELO_MAX - 1)  # the top limited level: a big node budget
    _, maximum = time_budget(limits, board.turn)
    budget = Skill(ELO_MAX - 1).nodes
    assert maximum is not None and budget > 20000
    # The stand-in clock moves a millisecond a reading, and the search reads it at every poll, at
    # least once every POLL_INTERVAL nodes: the hard limit's 67 readings come well within the budget.
    assert int(maximum * 1000) * garfish.engine.search.driver.POLL_INTERVAL < budget
    monkeypatch.setattr(garfish.engine.search.driver, "time", SteppingClock(step=0.001))  # a millisecond a reading
    result = Searcher(TranspositionTable(4), seed=0).search(board, limits)
    assert result.move in board.legal_moves
    # The clock, not the node budget, ended it, and by the search's own clock it stopped at its hard
    # limit, well within the 0.5 s it was given.
    assert 0 < result.nodes < budget
    assert maximum <= result.time < limits.wtime


def test_the_top_setting_searches_as_the_full_engine() -> None:
    """UCI_Elo at ELO_MAX (and above) has no node budget and one line: the same search, node for
    node, as no strength limit at all, where the setting below it stops at its budget."""
    board = chess.Board(BENCH_FENS[1])
    full = Searcher(TranspositionTable(4), seed=0).search(board, Limits(depth=9))
    for elo in (ELO_MAX, ELO_MAX + 300):
        top = Searcher(TranspositionTable(4), seed=0).search(board, Limits(depth=9, elo=elo))
        assert (top.nodes, top.move, len(top.lines)) == (full.nodes, full.move, 1)
    below = Skill(ELO_MAX - 1)
    assert below.nodes is not None and below.lines == SKILL_MULTIPV  # one below the top is limited
    # The highest setting whose budget the depth-9 search needs more than stops at that budget.
    elo = next(elo for elo in range(ELO_MAX - 1, ELO_MIN, -1) if Skill(elo).nodes < full.nodes)
    assert ELO_MAX - elo < 100
    assert Searcher(TranspositionTable(4), seed=0).search(board, Limits(depth=9, elo=elo)).nodes < full.nodes
