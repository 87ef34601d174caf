"""Syzygy endgame tablebases for the search, through python-chess's chess.syzygy.

Tablebases opens the tables of one or more folders and answers the search's two questions,
as Stockfish asks them (src/syzygy/tbprobe.cpp):

- rank_root_moves: at the root, which moves keep the tables' result best: ranked by DTZ
  (else by WDL when a DTZ table is missing or the root is drawn), so that a won ending is
  converted within the fifty-move rule, a drawn one held and a lost one resisted longest;
- probe_wdl: inside the tree, right after a capture or pawn move, win, draw or loss.

A position the tables do not hold (a missing table, castling rights) gets no answer (None).
Opening checks each file's size and magic header, and reads each header to check that the pieces
it encodes are those of the table's name. python-chess calls probing a corrupt file
undefined behaviour: a probe that raises (IndexError, RecursionError, ...) is reported once
through on_failure and switches all probing off until the tables are opened again.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable, Optional

import chess
import chess.syzygy

from garfish.engine.types import DRAW, TB_WIN

MAGIC = {".rtbw": chess.Board.tbw_magic, ".rtbz": chess.Board.tbz_magic}  # by file suffix: WDL, DTZ
MAX_DTZ = 1 << 18  # Stockfish's rank scale: beyond any DTZ, so that the rank classes below never overlap
# A root move's rank and score by its WDL (+2) when only WDL tables can rank (Stockfish's root_probe_wdl).
WDL_RANK = (-MAX_DTZ, -MAX_DTZ + 101, 0, MAX_DTZ - 101, MAX_DTZ)
WDL_SCORE = (-TB_WIN, DRAW - 2, DRAW, DRAW + 2, TB_WIN)
CURSED_MIN_CP = 3  # a win (loss) the fifty-move rule may turn into a draw shows as 3-99 cp (Stockfish's 1-49 cp)
PROBLEMS_SHOWN = 3  # files named in an error about unusable files
PROBE_CACHE_SIZE = 1 << 16  # probe answers kept (then all dropped): about 10 MB


class TablebaseError(Exception):
    """The folders cannot serve as tablebases: missing, no tables, or an unusable file."""


@dataclass
class RootRanking:
    """The root moves the tables keep, and what they say of them."""

    moves: list[chess.Move]
    """The best-ranked moves (in the order given): for a win, those that reach a capture or pawn
    move soonest while keeping the win within the fifty-move rule; for a draw, every drawing move."""
    score: int
    """Their score: ±TB_WIN, DRAW, or a few centipawns for a result the fifty-move rule may change."""
    by_dtz: bool
    """Ranked by DTZ; False: by WDL, a DTZ table being missing."""
    probes: int
    """Root moves probed."""


def check_table_file(path: str) -> Optional[str]:
    """Why the file cannot be a Syzygy table (unreadable, wrong size or magic header), or None."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as file:
            head = file.read(4)
    except OSError as exc:
        return f"cannot read '{path}' ({exc.strerror or exc})"
    if size % 64 != 16 or head != MAGIC[os.path.splitext(path)[1]]:
        return f"'{path}' is not a Syzygy table (bad size or header)"
    return None


def problems_error(problems: list[str]) -> TablebaseError:
    """One error naming the first PROBLEMS_SHOWN problems and how many more there are."""
    more = len(problems) - PROBLEMS_SHOWN
    return TablebaseError("; ".join(problems[:PROBLEMS_SHOWN]) + (f"; and {more} more" if more > 0 else ""))


def table_files(folders: list[str]) -> list[str]:
    """The Syzygy table files (KRvK.rtbw, KQvKR.rtbz, ...) in the folders, each checked by
    check_table_file; TablebaseError names a missing folder or the files that cannot serve."""
    found: list[str] = []
    problems: list[str] = []
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            problems.append(f"cannot read the folder '{folder}' ({exc.strerror or exc})")
            continue
        for name in names:
            stem, suffix = os.path.splitext(name)
            path = os.path.join(folder, name)
            if suffix in MAGIC and chess.syzygy.is_tablename(stem) and os.path.isfile(path):
                problem = check_table_file(path)
                if problem is None:
                    found.append(path)
                else:
                    problems.append(problem)
    if problems:
        raise problems_error(problems)
    return found


def _piece_lists(table: object) -> list[list[int]]:
    """The piece codes an opened python-chess table read from its header, one list per side and
    file (python-chess's internals: WDL tables keep pieces[side] or files[f].pieces[side], DTZ
    tables pieces or files[f].pieces)."""
    lists: list[list[int]] = []

    def add(pieces: object) -> None:
        if isinstance(pieces, dict):
            lists.extend(value for value in pieces.values() if value)
        elif isinstance(pieces, list) and pieces and isinstance(pieces[0], list):
            lists.extend(value for value in pieces if value)
        elif isinstance(pieces, list) and pieces:
            lists.append(pieces)

    if getattr(table, "has_pawns", False):
        for data in getattr(table, "files", []):
            add(getattr(data, "pieces", None))
    else:
        add(getattr(table, "pieces", None))
    return lists


def check_table_header(table: chess.syzygy.Table) -> Optional[str]:
    """Why an opened table cannot be trusted, or None. Reads its header now (python-chess does it
    at the first probe) and checks that the pieces it encodes are those of its name: a damaged
    header can send python-chess's probe into an endless loop (seen with random bytes written
    into KRvK.rtbw's first 200 bytes), which no stop could end."""
    path = table.path
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        if isinstance(table, chess.syzygy.WdlTable):
            table.init_table_wdl()
        elif isinstance(table, chess.syzygy.DtzTable):
            table.init_table_dtz()
        lists = _piece_lists(table)
    except Exception as exc:  # a damaged header: python-chess raises whatever its parsing met
        return f"'{path}' has a damaged header ({type(exc).__name__}: {exc})"
    expected = {chess.syzygy.normalize_tablename(name), chess.syzygy.normalize_tablename(name, mirror=True)}
    if not lists or any(len(pieces) != table.num or chess.syzygy.recalc_key(pieces) not in expected
                        for pieces in lists):
        return f"'{path}' has a damaged header (its pieces are not those of {name})"
    return None


class Tablebases:
    """Syzygy tables opened from folders, and the search's settings for probing them.

    path: folders separated by os.pathsep (':' on Unix, ';' on Windows). Raises TablebaseError
    when a folder is missing or unreadable, a table file is unusable, or no WDL table is found.
    """

    def __init__(self, path: str, probe_limit: int = 7, probe_depth: int = 1, rule50: bool = True,
                 on_failure: Optional[Callable[[str], None]] = None) -> None:
        folders = [folder for folder in path.split(os.pathsep) if folder]
        if not folders:
            raise TablebaseError("no folder given")
        files = table_files(folders)
        wdl = {os.path.basename(file)[:-5] for file in files if file.endswith(".rtbw")}
        if not wdl:
            raise TablebaseError(f"no Syzygy WDL tables (.rtbw) in {', '.join(repr(f) for f in folders)}")
        self.tables = chess.syzygy.Tablebase()
        for file in files:
            self.tables.add_file(file)
        opened = {id(table): table for tables in (self.tables.wdl, self.tables.dtz)
                  for table in tables.values()}  # each table is filed under both colours' names
        problems = [problem for table in opened.values() if (problem := check_table_header(table)) is not None]
        if problems:
            self.tables.close()
            raise problems_error(problems)
        self.path = path
        self.wdl_count = len(wdl)
        self.dtz_count = len({os.path.basename(file)[:-5] for file in files if file.endswith(".rtbz")})
        self.max_pieces = max(len(name) - 1 for name in wdl)  # "KQvKR": 4 pieces
        self.probe_limit = probe_limit  # SyzygyProbeLimit: most pieces of a position probed in the search
        self.probe_depth = probe_depth  # SyzygyProbeDepth: least depth to probe at the limit
        self.rule50 = rule50  # Syzygy50MoveRule: a win the fifty-move rule turns into a draw is a draw
        self.on_failure = on_failure
        self.failure: Optional[str] = None  # why probing stopped (a table failed), or None
        self._cache: dict[tuple, Optional[int]] = {}  # (probe, position) -> answer

    @property
    def cardinality(self) -> int:
        """Most pieces of a position the search probes: SyzygyProbeLimit, at most the largest
        tables' count; 0 once a table has failed."""
        return 0 if self.failure is not None else min(self.probe_limit, self.max_pieces)

    @property
    def depth(self) -> int:
        """Least remaining depth at which the search probes a position of `cardinality` pieces
        (fewer pieces: at any depth); 0 when the probe limit exceeds the largest tables, whose
        every position then has fewer pieces than the limit (as Stockfish sets it)."""
        return self.probe_depth if self.probe_limit <= self.max_pieces else 0

    def close(self) -> None:
        """Close the table files."""
        self.tables.close()

    # ----------------------------------------------------------------- probes
    def probe_wdl(self, board: chess.Board) -> Optional[int]:
        """The WDL of the side to move (2 win, 1 win the fifty-move rule turns into a draw, 0 draw,
        -1, -2), as if a capture or pawn move had just been made; None when no table holds it."""
        return self._probe(self.tables.probe_wdl, board)

    def probe_dtz(self, board: chess.Board) -> Optional[int]:
        """The DTZ of the side to move (plies to a capture or pawn move that keeps the result,
        positive when winning, over 100 when the fifty-move rule intervenes); None when unknown."""
        return self._probe(self.tables.probe_dtz, board)

    def _probe(self, probe: Callable[[chess.Board], int], board: chess.Board) -> Optional[int]:
        """probe(board), None for a position no table holds; a table that fails is reported
        once and switches probing off (all later probes answer None). Answers are kept (up to
        PROBE_CACHE_SIZE) for later searches of the game: the loser's DTZ probes cost milliseconds."""
        if self.failure is not None:
            return None
        key = (probe, board._transposition_key())  # pieces, side to move, castling and en-passant rights
        cache = self._cache
        if key in cache:
            return cache[key]
        try:
            answer: Optional[int] = probe(board)
        except KeyError:  # chess.syzygy.MissingTableError, castling rights, too many pieces
            answer = None
        except Exception as exc:  # a corrupt table: python-chess raises whatever its decoding met
            self.failure = (f"Syzygy probe failed in {board.fen()} ({type(exc).__name__}: {exc}); "
                            f"tablebases switched off until SyzygyPath is set again")
            if self.on_failure is not None:
                self.on_failure(self.failure)
            return None
        if len(cache) >= PROBE_CACHE_SIZE:
            cache.clear()
        cache[key] = answer
        return answer

    # ------------------------------------------------------------- root moves
    def rank_root_moves(self, board: chess.Board, moves: list[chess.Move], deadline: Optional[float] = None,
                        first: Optional[chess.Move] = None) -> Optional[RootRanking]:
        """Rank the root moves by DTZ, else by WDL, and keep the best-ranked ones (Stockfish's
        root_probe and root_probe_wdl); None when the tables cannot rank them all.

        board: the root, with its game's move stack (a move that repeats a position a third
        time is a draw); the caller checks that it has few enough pieces and no castling rights.
        A won or lost root is ranked by DTZ (a drawn one by WDL: its drawing moves are all kept).
        The root's own DTZ (a cheap probe) says what the best move reaches; the moves are probed
        most promising first (`first`, say the TT move, then captures and pawn moves that keep
        the win, then checks) and the ranking stops at the first that reaches it: a child's DTZ
        (the loser to move) costs milliseconds, and probing them all took longer than a move of a
        fast game has (a win ranked by WDL instead was shuffled to a fifty-move draw).
        deadline: a time.perf_counter() time past which no more DTZ probes are made once a move
        that keeps the root's result is known (the probes are never cut before: a win ranked by WDL
        alone is shuffled); the best move probed by then stands.
        """
        if not moves:
            return None
        board = board.copy()
        ranked: Optional[list[tuple[chess.Move, int, int]]] = None
        root_dtz = self.probe_dtz(board)
        if root_dtz:
            ordered = self._probe_order(board, moves, first, root_dtz > 0)
            fast = root_dtz > 0 and self._stored_for_side_to_move(board)
            ranked = self._fast_win(board, ordered, root_dtz) if fast else None
            if ranked is None:
                repeated = has_repeated(board)
                ranked = self._dtz_ranks(board, ordered, root_dtz, None if repeated else deadline, repeated)
        by_dtz = ranked is not None
        if ranked is None:
            ranked = self._wdl_ranks(board, moves)
            if ranked is None:
                return None
        best = max(rank for _, rank, _ in ranked)
        kept = [move for move, rank, _ in ranked if rank == best]
        score = next(score for _, rank, score in ranked if rank == best)
        return RootRanking(kept, score, by_dtz, len(ranked))

    @staticmethod
    def _probe_order(board: chess.Board, moves: list[chess.Move], first: Optional[chess.Move],
                     winning: bool) -> list[chess.Move]:
        """The moves in the order their DTZ is probed: `first`, then (for the winner) captures
        and pawn moves, which reach the next phase at once, then checks, then the others."""
        def key(move: chess.Move) -> int:
            if move == first:
                return 0
            if winning and board.is_zeroing(move):
                return 1
            return 2 if board.gives_check(move) else 3
        return sorted(moves, key=key)

    def _stored_for_side_to_move(self, board: chess.Board) -> bool:
        """Whether the position's DTZ table holds the side to move's positions (a DTZ table holds
        one side; python-chess answers a probe of the other by probing every move, milliseconds)."""
        try:
            wdl = self.tables.probe_wdl(board)
            return wdl != 0 and self.tables.probe_dtz_table(board, wdl)[1] >= 0
        except Exception:  # KeyError (no table), or a table that fails: the plain ranking reports it
            return False

    def _fast_win(self, board: chess.Board, moves: list[chess.Move],
                  root_dtz: int) -> Optional[list[tuple[chess.Move, int, int]]]:
        """[(move, rank, score)] for the first move shown to win as fast as the root's DTZ promises,
        or None when none is: after the move, every reply of the loser either zeroes and keeps the
        win, or leaves the winner (to move) at most root_dtz - 2 plies from zeroing. A reply of the
        winner's DTZ over that refutes the move at once. Used where the table holds the winner's
        side: its probes are then lookups (tenths of a millisecond), and the loser's, which a move's
        own DTZ needs, cost milliseconds each. Each such move takes the next phase 2 plies nearer,
        so the win cannot be shuffled away."""
        cnt50 = board.halfmove_clock
        refutation: list[Optional[chess.Move]] = [None]  # the reply that refuted the last move: tried first
        for move in moves:
            if board.is_zeroing(move):
                continue  # its WDL says all: _dtz_ranks probes it first
            board.push(move)
            try:
                fast = self._every_reply_closer(board, root_dtz, refutation)
            finally:
                board.pop()
            if fast is None:
                return None
            if fast:
                return [(move, *self._dtz_rank(root_dtz, cnt50))]
        return None

    def _every_reply_closer(self, board: chess.Board, root_dtz: int,
                            refutation: list[Optional[chess.Move]]) -> Optional[bool]:
        """Whether every reply of the side to move (the loser) keeps the win and zeroes, or leaves
        the winner at most root_dtz - 2 plies from zeroing (a mate counts as closer; None: a probe
        failed). refutation[0], a reply tried first if legal, becomes the reply that refuted it."""
        if board.is_checkmate():
            return True
        replies = list(board.legal_moves)
        if not replies:
            return False  # stalemate
        if refutation[0] in replies:
            replies.insert(0, replies.pop(replies.index(refutation[0])))
        for reply in replies:
            board.push(reply)
            try:
                if board.halfmove_clock == 0:
                    wdl = self.probe_wdl(board)
                    closer = None if wdl is None else wdl == 2 or (wdl == 1 and root_dtz > 100)
                elif board.is_repetition(3):
                    closer = False
                else:
                    dtz = self.probe_dtz(board)
                    closer = None if dtz is None else 0 < dtz <= root_dtz - 2
            finally:
                board.pop()
            if not closer:
                refutation[0] = reply
                return closer
        return True

    def _dtz_ranks(self, board: chess.Board, moves: list[chess.Move], root_dtz: int, deadline: Optional[float],
                   repeated: bool = False) -> Optional[list[tuple[chess.Move, int, int]]]:
        """(move, rank, score) from each move's DTZ counted from the root, in the order given,
        until a move reaches the root's DTZ (none can do better), or until the deadline has passed
        and a move that keeps the root's result is known; None when a probe fails. Where the root is
        a win the fifty-move counter cannot spoil, only a move that keeps it so counts (a slower win
        that the counter spoils, played move after move, shuffles the win into a draw).

        repeated: a position has stood twice since the last capture or pawn move (has_repeated); a
        winning move after which the opponent can repeat a position a third time then ranks as a draw,
        as one that repeats a third time itself does (_reply_repeats). The caller gives no
        deadline once a position has repeated (Stockfish ranks every win by its DTZ then): slower
        wins, each keeping the result, had gone round in a circle into a threefold repetition on
        a busy machine."""
        ranked: list[tuple[chess.Move, int, int]] = []
        unspoiled = self.rule50 and root_dtz > 0 and root_dtz + board.halfmove_clock <= 99
        kept = MAX_DTZ // 2 if unspoiled else 0  # a win's ranks above this keep the root's result
        best: Optional[int] = None  # the best rank so far
        for move in moves:
            if (deadline is not None and best is not None and (best < 0 if root_dtz < 0 else best > kept)
                    and time.perf_counter() > deadline):
                return ranked  # out of time, and a move that keeps the root's result is known
            board.push(move)
            try:
                if board.halfmove_clock == 0:  # a capture or pawn move: its WDL says all
                    wdl = self.probe_wdl(board)
                    dtz = None if wdl is None else chess.syzygy.dtz_before_zeroing(-wdl)
                elif (board.is_repetition(3) or board.is_fifty_moves()
                      or (repeated and root_dtz > 0 and _reply_repeats(board))):
                    dtz = 0
                else:
                    child = self.probe_dtz(board)
                    dtz = None if child is None else -child + (1 if child < 0 else -1 if child > 0 else 0)
                if dtz == 2 and board.is_checkmate():
                    dtz = 1  # mate ranks with the fastest wins
            finally:
                board.pop()
            if dtz is None:
                return None
            ranked.append((move, *self._dtz_rank(dtz, board.halfmove_clock)))
            best = ranked[-1][1] if best is None else max(best, ranked[-1][1])
            if (0 < dtz <= root_dtz) or (root_dtz < 0 and dtz <= root_dtz):
                break  # as fast a win (as slow a loss) as the root's DTZ promises: the best there is
        return ranked

    def _dtz_rank(self, dtz: int, cnt50: int) -> tuple[int, int]:
        """Stockfish's rank and score of a root move of DTZ dtz (from the root; negative when it
        loses) with the fifty-move counter at cnt50: wins the counter cannot spoil rank first,
        then the others, then draws, then losses. Stockfish ranks every sure win alike and leaves
        the choice to its search (ranking by DTZ only once a position repeats); here each ply of
        DTZ counts (its rankDTZ ranking), so that the search, shallow in Python, makes progress
        at every move: the fastest route to the next capture, pawn move or mate."""
        if dtz > 0:
            rank = MAX_DTZ - dtz if dtz + cnt50 <= 99 else MAX_DTZ // 2 - (dtz + cnt50)
        elif dtz < 0:
            rank = -MAX_DTZ - dtz if -dtz * 2 + cnt50 < 100 else -MAX_DTZ // 2 + (-dtz + cnt50)
        else:
            rank = 0
        bound = MAX_DTZ // 2 - 100 if self.rule50 else 1
        if rank >= bound:
            return rank, TB_WIN
        if rank > 0:
            return rank, max(CURSED_MIN_CP, rank - (MAX_DTZ // 2 - 200)) // 2
        if rank == 0:
            return rank, DRAW
        if rank > -bound:
            return rank, -(max(CURSED_MIN_CP, -rank - (MAX_DTZ // 2 - 200)) // 2)
        return rank, -TB_WIN

    def _wdl_ranks(self, board: chess.Board, moves: list[chess.Move]) -> Optional[list[tuple[chess.Move, int, int]]]:
        """Each move's (move, rank, score) from its WDL alone, or None when a probe fails."""
        ranked = []
        for move in moves:
            board.push(move)
            try:
                child = 0 if board.is_repetition(3) or board.is_fifty_moves() else self.probe_wdl(board)
            finally:
                board.pop()
            if child is None:
                return None
            wdl = -child
            if not self.rule50 and wdl:
                wdl = 2 if wdl > 0 else -2  # without the fifty-move rule a cursed win is a win
            ranked.append((move, WDL_RANK[-child + 2], WDL_SCORE[wdl + 2]))
        return ranked


def has_repeated(board: chess.Board) -> bool:
    """Whether a position has stood twice on the board since the last capture or pawn move (the current
    one included): Stockfish's has_repeated, by python-chess's repetition test at each of those plies."""
    board = board.copy()
    for back in range(min(board.halfmove_clock, len(board.move_stack)) + 1):
        if back:
            board.pop()
        if board.is_repetition(2):
            return True
    return False


def _reply_repeats(board: chess.Board) -> bool:
    """Whether the side to move has a move that repeats a position a third time (a draw), as
    _every_reply_closer tests each reply."""
    for reply in board.legal_moves:
        if board.is_zeroing(reply):
            continue
        board.push(reply)
        try:
            if board.is_repetition(3):
                return True
        finally:
            board.pop()
    return False
