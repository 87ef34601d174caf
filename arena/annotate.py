"""Judging a game's moves from an engine's evaluations and writing the verdicts into the game (`garfish analyse`).

No engine here: analyse.py searches the moves and hands over a GameAnalysis; this module turns it
into verdicts, per-player figures, PGN annotations and a picture.

A move's *loss* is what it gave away in expected score (win = 1, draw = 1/2, loss = 0, from the
mover's side) against the engine's best move, both searched from the position before the move.
The expected score comes from the win/draw/loss chances the engine reports (`UCI_ShowWDL`), or,
for an engine without them, from lichess's logistic curve of centipawns. The verdicts follow
lichess (lila, `modules/analyse/src/main/Advice.scala`): its thresholds of 0.1, 0.2 and 0.3 on a
winning-chance scale of -1..1 are 0.05, 0.10 and 0.15 of expected score, and its rules for lost
and allowed mates are kept. The accuracy is lichess's (`AccuracyPercent.scala`).
"""

from __future__ import annotations

import enum
import io
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import chess
import chess.engine
import chess.pgn

# Expected score lost by a move (0..1) from which it is an inaccuracy, a mistake, a blunder:
# lichess's 0.1 / 0.2 / 0.3 of winning chances on its -1..1 scale (Advice.scala, winningChanceJudgements).
INACCURACY_LOSS = 0.05
MISTAKE_LOSS = 0.10
BLUNDER_LOSS = 0.15
# A forced mate let go, judged by the evaluation left (centipawns, the mover's side; lichess's MateAdvice):
# still above LOST_MATE_INACCURACY_CP only an inaccuracy, above LOST_MATE_MISTAKE_CP a mistake, else a blunder.
# A mate allowed is judged likewise by the evaluation the best move kept, with the signs turned.
LOST_MATE_INACCURACY_CP = 999
LOST_MATE_MISTAKE_CP = 700
# lichess's move accuracy from the loss in win percent d (0..100): A * exp(-K * d) + B, plus 1 for
# imperfect analysis, within 0..100 (AccuracyPercent.fromWinPercents).
ACCURACY_A = 103.1668100711649
ACCURACY_K = 0.04354415386753951
ACCURACY_B = -3.166924740191411
ACCURACY_BONUS = 1.0
# The volatility weights of lichess's game accuracy: a window of a tenth of the moves (2..8) of win
# percents, its standard deviation within 0.5..12 (AccuracyPercent.gameAccuracy).
WINDOW_DIVISOR = 10
WINDOW_MIN, WINDOW_MAX = 2, 8
WEIGHT_MIN, WEIGHT_MAX = 0.5, 12.0
HARMONIC_FLOOR = 1.0  # lichess's harmonic mean counts an accuracy below 1 as 1
CP_CEILING = 1000  # centipawns clamped to +-1000 (a mate counts as 1000) for the average centipawn loss
LOSS_DIGITS = 9
LINE_PLIES = 12  # the better line given as a variation is cut to this many plies
PLOT_SIZE = (8.0, 3.6)  # inches, at PLOT_DPI
PLOT_DPI = 100


class Judgement(enum.IntEnum):
    """A verdict on a move, worst last; its NAG and the word lichess uses."""

    INACCURACY = 1
    MISTAKE = 2
    BLUNDER = 3

    @property
    def nag(self) -> int:
        """The PGN NAG: $6 (?!), $2 (?), $4 (??)."""
        return {Judgement.INACCURACY: chess.pgn.NAG_DUBIOUS_MOVE, Judgement.MISTAKE: chess.pgn.NAG_MISTAKE,
                Judgement.BLUNDER: chess.pgn.NAG_BLUNDER}[self]

    @property
    def symbol(self) -> str:
        """?!, ? or ??."""
        return {Judgement.INACCURACY: "?!", Judgement.MISTAKE: "?", Judgement.BLUNDER: "??"}[self]

    @property
    def word(self) -> str:
        """Inaccuracy, Mistake or Blunder."""
        return self.name.capitalize()


MOVE_ASSESSMENT_NAGS = range(1, 7)  # $1..$6: !, ?, !!, ??, !?, ?! (a move the input already judged keeps its NAG)


@dataclass
class MoveEval:
    """What the engine found for one move of the game, searched from the position before it.

    Scores are from the mover's side (python-chess Scores); the best line is in UCI from that position.
    A move the engine gave no score for (best is None) is not judged.
    """

    ply: int  # 0 for the game's first move
    move: str  # the move played, UCI
    best_line: list[str] = field(default_factory=list)
    best: Optional[chess.engine.Score] = None
    played: Optional[chess.engine.Score] = None
    best_expected: float = 0.5  # the mover's expected score after the best move (0..1)
    played_expected: float = 0.5  # ... after the move played
    depth: Optional[int] = None  # of the search that scored the move played
    nodes: Optional[int] = None  # of all searches of this move

    @property
    def evaluated(self) -> bool:
        """Whether both the best and the played move have a score."""
        return self.best is not None and self.played is not None

    @property
    def loss(self) -> float:
        """Expected score given away (0..1; never negative: a move found better than the best loses nothing),
        rounded to LOSS_DIGITS so that per-mille chances meet the thresholds exactly (0.6 - 0.5 is 0.1)."""
        return round(max(0.0, self.best_expected - self.played_expected), LOSS_DIGITS) if self.evaluated else 0.0


@dataclass
class GameAnalysis:
    """The engine's findings for one game's main line: a MoveEval per move, in order."""

    number: int  # the game's place in its file, from 1
    engine: str  # the engine's name
    limit: str  # the search limit, as shown ("nodes 20000")
    moves: list[MoveEval] = field(default_factory=list)


@dataclass
class Verdict:
    """A judged move: its Judgement (None for a good move) and, for a mate let go or allowed, lichess's words."""

    judgement: Optional[Judgement]
    mate_note: Optional[str] = None


@dataclass
class PlayerSummary:
    """One side's figures in one game (or, summed, over several)."""

    moves: int = 0  # judged moves
    loss: float = 0.0  # summed expected-score loss (0..1 per move)
    centipawn_loss: float = 0.0  # summed, clamped to CP_CEILING
    inaccuracies: int = 0
    mistakes: int = 0
    blunders: int = 0
    accuracy: Optional[float] = None  # 0..100, lichess's game accuracy

    @property
    def average_loss(self) -> float:
        """Average expected-score loss per move, in percent points."""
        return 100.0 * self.loss / self.moves if self.moves else 0.0

    @property
    def acpl(self) -> float:
        """Average centipawn loss per move."""
        return self.centipawn_loss / self.moves if self.moves else 0.0

    def count(self, judgement: Optional[Judgement]) -> None:
        """Add a verdict to the counts."""
        if judgement == Judgement.INACCURACY:
            self.inaccuracies += 1
        elif judgement == Judgement.MISTAKE:
            self.mistakes += 1
        elif judgement == Judgement.BLUNDER:
            self.blunders += 1


# --------------------------------------------------------------------------- scores and verdicts
def expected_score(info: chess.engine.InfoDict, mover: chess.Color) -> Optional[float]:
    """The mover's expected score (0..1) from an engine's info: its `wdl` when it reports one, else
    lichess's curve of its centipawns (a mate counts as a win or a loss); None without a score."""
    wdl = info.get("wdl")
    if wdl is not None:
        return wdl.pov(mover).expectation()
    score = info.get("score")
    if score is None:
        return None
    return score.pov(mover).wdl(model="lichess").expectation()


def centipawns(score: chess.engine.Score) -> int:
    """A score in centipawns within +-CP_CEILING, a mate counting as the ceiling."""
    return max(-CP_CEILING, min(CP_CEILING, score.score(mate_score=CP_CEILING)))


def mate_verdict(best: chess.engine.Score, played: chess.engine.Score) -> Verdict:
    """lichess's verdict on a forced mate let go (by the evaluation left) or allowed (by the one the best
    move kept); Verdict(None) when neither happened (a slower mate is not judged)."""
    best_mate, played_mate = best.mate(), played.mate()
    if best_mate is not None and best_mate > 0 and (played_mate is None or played_mate < 0):
        left = centipawns(played)
        if left > LOST_MATE_INACCURACY_CP:
            return Verdict(Judgement.INACCURACY, "Lost forced checkmate sequence")
        if left > LOST_MATE_MISTAKE_CP:
            return Verdict(Judgement.MISTAKE, "Lost forced checkmate sequence")
        return Verdict(Judgement.BLUNDER, "Lost forced checkmate sequence")
    if played_mate is not None and played_mate < 0 and best_mate is None:
        kept = centipawns(best)
        if kept < -LOST_MATE_INACCURACY_CP:
            return Verdict(Judgement.INACCURACY, "Checkmate is now unavoidable")
        if kept < -LOST_MATE_MISTAKE_CP:
            return Verdict(Judgement.MISTAKE, "Checkmate is now unavoidable")
        return Verdict(Judgement.BLUNDER, "Checkmate is now unavoidable")
    return Verdict(None)


def judge(move: MoveEval) -> Verdict:
    """The verdict on a move: the worse of the expected-score thresholds and lichess's mate rules."""
    if move.best is None or move.played is None:
        return Verdict(None)
    loss = move.loss
    judgement = (Judgement.BLUNDER if loss >= BLUNDER_LOSS else Judgement.MISTAKE if loss >= MISTAKE_LOSS
                 else Judgement.INACCURACY if loss >= INACCURACY_LOSS else None)
    mate = mate_verdict(move.best, move.played)
    if mate.judgement is not None and (judgement is None or mate.judgement >= judgement):
        return mate
    return Verdict(judgement)


def move_accuracy(before: float, after: float) -> float:
    """lichess's accuracy (0..100) of a move that took the mover's expected score from before to after (0..1)."""
    if after >= before:
        return 100.0
    raw = ACCURACY_A * math.exp(-ACCURACY_K * 100.0 * (before - after)) + ACCURACY_B + ACCURACY_BONUS
    return max(0.0, min(100.0, raw))


def volatility_weights(white_percents: list[float]) -> list[float]:
    """A weight per move: the standard deviation of the win percents around it (lichess's gameAccuracy);
    white_percents has one value more than there are moves (the position before the first)."""
    moves = len(white_percents) - 1
    size = max(WINDOW_MIN, min(WINDOW_MAX, moves // WINDOW_DIVISOR))
    size = min(size, len(white_percents))
    windows = [white_percents[:size]] * max(0, size - 2)
    windows += [white_percents[start:start + size] for start in range(len(white_percents) - size + 1)]
    return [max(WEIGHT_MIN, min(WEIGHT_MAX, statistics.pstdev(window))) for window in windows[:moves]]


def game_accuracy(moves: list[MoveEval], mover_of: dict[int, chess.Color]) -> dict[chess.Color, Optional[float]]:
    """Each side's game accuracy (0..100): the mean of the volatility-weighted mean and the harmonic mean
    of its moves' accuracies, as lichess has it. mover_of maps a ply to the side that played it."""
    judged = [move for move in moves if move.evaluated]
    if not judged:
        return {chess.WHITE: None, chess.BLACK: None}

    def white_view(move: MoveEval, expected: float) -> float:
        """A mover's expected score as White's win percent."""
        return 100.0 * (expected if mover_of[move.ply] == chess.WHITE else 1.0 - expected)

    percents = [white_view(judged[0], judged[0].best_expected)] + [white_view(m, m.played_expected) for m in judged]
    weights = volatility_weights(percents)
    result: dict[chess.Color, Optional[float]] = {}
    for color in (chess.WHITE, chess.BLACK):
        pairs = [(move_accuracy(move.best_expected, move.played_expected), weight)
                 for move, weight in zip(judged, weights) if mover_of[move.ply] == color]
        if not pairs:
            result[color] = None
            continue
        weighted = sum(a * w for a, w in pairs) / sum(w for _, w in pairs)
        harmonic = len(pairs) / sum(1.0 / max(HARMONIC_FLOOR, a) for a, _ in pairs)
        result[color] = (weighted + harmonic) / 2.0
    return result


def summarize(analysis: GameAnalysis, mover_of: dict[int, chess.Color]) -> dict[chess.Color, PlayerSummary]:
    """Each side's moves, losses, verdict counts and accuracy in this game."""
    sides = {chess.WHITE: PlayerSummary(), chess.BLACK: PlayerSummary()}
    for move in analysis.moves:
        if not move.evaluated or move.best is None or move.played is None:
            continue
        side = sides[mover_of[move.ply]]
        side.moves += 1
        side.loss += move.loss
        side.centipawn_loss += max(0, centipawns(move.best) - centipawns(move.played))
        side.count(judge(move).judgement)
    for color, accuracy in game_accuracy(analysis.moves, mover_of).items():
        sides[color].accuracy = accuracy
    return sides


# --------------------------------------------------------------------------- the annotated game
def eval_after(score: chess.engine.Score, mover: chess.Color) -> chess.engine.PovScore:
    """The evaluation of the position a move leads to, from the mover's score of that move: the mate
    counts of the side that mates go down by one (a mate given is `#0`, which set_eval leaves out)."""
    mate = score.mate()
    if mate is not None and mate > 0:
        return chess.engine.PovScore(chess.engine.Mate(mate - 1), mover) if mate > 1 else \
            chess.engine.PovScore(chess.engine.Mate(0), not mover)
    return chess.engine.PovScore(score, mover)


def format_eval(pov: chess.engine.PovScore) -> str:
    """White's view of an evaluation as lichess writes it: +0.25, -1.20, #3, #-2 (#0: mate given)."""
    white = pov.white()
    mate = white.mate()
    if mate is not None:
        return f"#{mate}"
    return f"{(white.score() or 0) / 100:+.2f}"


def mover_map(game: chess.pgn.Game) -> dict[int, chess.Color]:
    """The side that plays each ply of the main line."""
    turn = game.board().turn
    return {ply: turn if ply % 2 == 0 else not turn for ply in range(len(list(game.mainline_moves())))}


def move_label(board: chess.Board, move: chess.Move) -> str:
    """'12. Nf3' or '12... Nf6' for a move from this position."""
    return f"{board.fullmove_number}{'.' if board.turn == chess.WHITE else '...'} {board.san(move)}"


def side_text(name: str, summary: PlayerSummary) -> str:
    """A side's figures as the game's comment gives them."""
    accuracy = "-" if summary.accuracy is None else f"{summary.accuracy:.0f}"
    return (f"{name}: accuracy {accuracy}, average loss {summary.average_loss:.1f}%, ACPL {summary.acpl:.0f}, "
            f"{plural(summary.inaccuracies, 'inaccuracy', 'inaccuracies')}, {plural(summary.mistakes, 'mistake')}, "
            f"{plural(summary.blunders, 'blunder')}.")


def plural(count: int, word: str, words: Optional[str] = None) -> str:
    """'1 mistake', '2 mistakes'."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def annotate(game: chess.pgn.Game, analysis: GameAnalysis) -> chess.pgn.Game:
    """A copy of the game with the analysis written in: `[%eval]` on every judged move, ?!/?/?? NAGs
    with lichess's words and the better line as a variation, the players' figures in a comment before
    the first move, and an Annotator header when the game had none. What the game had stays."""
    annotated = copy_game(game)
    mover_of = mover_map(annotated)
    nodes = list(annotated.mainline())  # nodes[ply]: the node of the move of that ply
    for move in analysis.moves:
        if move.ply >= len(nodes) or move.best is None or move.played is None:
            continue
        node, mover = nodes[move.ply], mover_of[move.ply]
        node.set_eval(eval_after(move.played, mover))
        verdict = judge(move)
        if verdict.judgement is None:
            continue
        if not any(nag in MOVE_ASSESSMENT_NAGS for nag in node.nags):
            node.nags.add(verdict.judgement.nag)
        parent = node.parent
        assert parent is not None
        board = parent.board()
        # lichess's "(before -> after)": the position's evaluation before the move (the best line's), and after it
        change = (f"{format_eval(chess.engine.PovScore(move.best, mover))} -> "
                  f"{format_eval(eval_after(move.played, mover))}")
        text = f"{verdict.mate_note or verdict.judgement.word} ({change})."
        line = best_line(board, move.best_line)
        if line:
            text += f" Best move was {board.san(line[0])}."
            add_line(parent, line, eval_after(move.best, mover))
        node.comment = f"{node.comment} {text}".strip()
    sides = summarize(analysis, mover_of)
    summary = (f"{analysis.engine}, {analysis.limit} a move. " + side_text("White", sides[chess.WHITE]) + " "
               + side_text("Black", sides[chess.BLACK]))
    annotated.comment = f"{annotated.comment} {summary}".strip()
    if "Annotator" not in annotated.headers:
        annotated.headers["Annotator"] = f"{analysis.engine} ({analysis.limit})"
    return annotated


def copy_game(game: chess.pgn.Game) -> chess.pgn.Game:
    """A deep copy of a game (headers, comments, NAGs, variations)."""
    exporter = chess.pgn.StringExporter(headers=True, variations=True, comments=True)
    text = game.accept(exporter)
    copied = chess.pgn.read_game(io.StringIO(text))
    assert copied is not None
    return copied


def best_line(board: chess.Board, line: list[str]) -> list[chess.Move]:
    """The legal prefix of a UCI line from this position, at most LINE_PLIES moves."""
    walk = board.copy(stack=False)
    moves = []
    for text in line[:LINE_PLIES]:
        try:
            move = walk.parse_uci(text)
        except ValueError:
            break
        moves.append(move)
        walk.push(move)
    return moves


def add_line(parent: chess.pgn.GameNode, line: list[chess.Move], evaluation: chess.engine.PovScore) -> None:
    """The better line as a variation after the move played, unless the game already has one starting so."""
    if any(variation.move == line[0] for variation in parent.variations):
        return
    node = parent.add_variation(line[0])
    node.set_eval(evaluation)
    for move in line[1:]:
        node = node.add_variation(move)


# --------------------------------------------------------------------------- the picture
@dataclass
class PlotPoint:
    """One judged move in the game's picture: where (White's move N at N, Black's at N + 1/2), its label,
    White's expected score after it, and its verdict (0: none)."""

    x: float
    label: str
    white: float
    judgement: int


def plot_points(game: chess.pgn.Game, analysis: GameAnalysis) -> tuple[float, list[PlotPoint]]:
    """White's expected score before the first judged move, and a point per judged move."""
    board = game.board()
    first = 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK)  # the first ply's number in the game
    labels, movers = [], []
    for played in game.mainline_moves():
        labels.append(move_label(board, played))
        movers.append(board.turn)
        board.push(played)
    points: list[PlotPoint] = []
    start = 0.5
    for move in analysis.moves:
        if not move.evaluated or move.ply >= len(labels):
            continue
        white = movers[move.ply] == chess.WHITE
        if not points:
            start = move.best_expected if white else 1.0 - move.best_expected
        verdict = judge(move).judgement
        points.append(PlotPoint((first + move.ply) / 2 + 1, labels[move.ply],
                                move.played_expected if white else 1.0 - move.played_expected, int(verdict or 0)))
    return start, points


PLOT_COLOURS = {Judgement.INACCURACY: "#56b4e9", Judgement.MISTAKE: "#e69f00", Judgement.BLUNDER: "#df5353"}


def plot_game(path: Path, title: str, start: float, points: list[PlotPoint]) -> None:
    """Draw White's expected score over the moves (light: White better, dark: Black), the judged moves
    marked, mistakes and blunders named (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axes = plt.subplots(figsize=PLOT_SIZE, dpi=PLOT_DPI)
    xs = [points[0].x - 0.5 if points else 0.0] + [point.x for point in points]
    ys = [start] + [point.white for point in points]
    axes.fill_between(xs, ys, 0.5, where=[y >= 0.5 for y in ys], interpolate=True, color="#d9d9d9", linewidth=0)
    axes.fill_between(xs, ys, 0.5, where=[y <= 0.5 for y in ys], interpolate=True, color="#595959", linewidth=0)
    axes.plot(xs, ys, color="#222222", linewidth=1.0)
    axes.axhline(0.5, color="grey", linewidth=0.6)
    for judgement in Judgement:
        marked = [point for point in points if point.judgement == judgement]
        if not marked:
            continue
        axes.scatter([point.x for point in marked], [point.white for point in marked], color=PLOT_COLOURS[judgement],
                     s=28, zorder=3, edgecolors="black", linewidths=0.4,
                     label=f"{judgement.word} ({judgement.symbol})")
        if judgement >= Judgement.MISTAKE:
            for point in marked:
                axes.annotate(point.label + judgement.symbol, (point.x, point.white), textcoords="offset points",
                              xytext=(3, 5 if point.white < 0.85 else -10), fontsize=7)
    axes.set_xlim(xs[0], max(xs[-1], xs[0] + 1))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylim(0, 1)
    axes.set_xlabel("move")
    axes.set_ylabel("White's expected score")
    axes.set_title(title, fontsize=9)
    if any(point.judgement for point in points):
        axes.legend(loc="lower left", fontsize=7, framealpha=0.8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
