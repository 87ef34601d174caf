"""A tiny scripted UCI engine for testing `garfish epd` and `garfish match` (pure Python, no Numba).

Its behaviour is chosen on the command line (run it with `sys.executable`):

    scripted_engine.py [--play first|random|greedy] [--seed S] [--score CP] [--name NAME]
                       [--misbehave illegal|stall|crash|flag|null|none] [--after K]
                       [--fail-start] [--options] [--chess960] [--ponder] [--delay S] [--stop-delay S]
                       [--deviate K] [--moves UCI,UCI,...] [--log FILE] [--multipv]
                       [--hold-file PATH --hold-game N]

--play       first: the first legal move in python-chess's order; random: a legal move picked by a
             seeded hash of the position (the same position always gets the same move); greedy: mate
             in one if there is one, else the most valuable capture, else as random.
--score CP   report `info ... score cp CP` before every bestmove (for adjudication tests).
--misbehave  from the K-th `go` of each game on (K = --after, counted since the last ucinewgame):
             illegal: answer a move that is not legal; null: answer `bestmove 0000`; none: answer
             `bestmove (none)`; stall: never answer (and ignore stdin); crash: exit at once with
             status 3; flag: sleep 0.3 s longer than the whole remaining clock (or the movetime),
             then answer a legal move.
--fail-start exit with status 1 before answering `uci` (an engine that does not start).
--options    declare a spin option `Skill` and a check option `Flag` (to test option passing).
--chess960   declare UCI_Chess960 and read positions and moves as Chess960 when it is on.
--ponder     declare Ponder and send `bestmove M ponder R`, R being the reply --play random (same
             seed) picks after M; `go ponder` is answered only after `ponderhit` (at once) or
             `stop` (after --stop-delay seconds).
--delay S    think S seconds before answering a normal `go`.
--deviate K  play the first legal move instead at every K-th `go` of a game (to miss a ponderer's guess).
--moves LIST a game's moves from its start (comma-separated UCI): at ply N of the game (N moves
             after the `position` FEN) play the N-th, while it is legal; then as --play.
--log FILE   append every line received to FILE.
--multipv    declare MultiPV; with N lines, answer each `go` with N `info ... multipv i` lines: the move
             --play picks, then the other legal moves by their UCI text, 10 cp less each (the score is
             --score's).
--hold-file  with --hold-game N: from the N-th `ucinewgame` this process receives on, answer no
             `go` while PATH does not exist (it waits for the file: a test decides when it goes on);
             with --hold-game 0, answer no `uci` (the engine's start) until then. When it begins to
             wait it writes an empty file PATH.held.PID (PID its process id): a test knows which
             process is held, and so in which worker.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from types import MappingProxyType
from typing import Optional, TextIO

import chess

PIECE_VALUE = MappingProxyType({chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9,
                                chess.KING: 0})
FLAG_EXTRA_SECONDS = 0.3
STALL_SECONDS = 3600.0
CRASH_STATUS = 3
HOLD_POLL_SECONDS = 0.02


def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of the scripted engine."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--play", choices=("first", "random", "greedy"), default="first")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score", type=int, default=None)
    parser.add_argument("--name", default=None)
    parser.add_argument("--misbehave", choices=("illegal", "stall", "crash", "flag", "null", "none"), default=None)
    parser.add_argument("--after", type=int, default=1)
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--options", action="store_true")
    parser.add_argument("--chess960", action="store_true")
    parser.add_argument("--ponder", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--stop-delay", type=float, default=0.0)
    parser.add_argument("--deviate", type=int, default=0)
    parser.add_argument("--moves", default="")
    parser.add_argument("--log", default=None)
    parser.add_argument("--multipv", action="store_const", const=1, default=0)
    parser.add_argument("--hold-file", default=None)
    parser.add_argument("--hold-game", type=int, default=1)
    return parser


def hold(path: str) -> None:
    """Wait until `path` exists; if it does not yet, first write the empty file `path`.held.PID."""
    if os.path.exists(path):
        return
    mark = f"{path}.held.{os.getpid()}"
    open(mark, "w").close()
    while not os.path.exists(path):
        time.sleep(HOLD_POLL_SECONDS)


def hashed_move(board: chess.Board, seed: int) -> chess.Move:
    """A legal move chosen by a stable hash of the position and the seed."""
    moves = sorted(board.legal_moves, key=lambda move: move.uci())
    key = zlib.crc32(f"{seed} {board.fen()}".encode())
    return moves[key % len(moves)]


def greedy_move(board: chess.Board, seed: int) -> chess.Move:
    """Mate in one if possible, else the most valuable capture, else a hashed move."""
    best: Optional[chess.Move] = None
    best_value = 0
    for move in board.legal_moves:
        board.push(move)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return move
        captured = board.piece_type_at(move.to_square)
        if captured is not None and PIECE_VALUE[captured] > best_value:
            best, best_value = move, PIECE_VALUE[captured]
    return best if best is not None else hashed_move(board, seed)


def choose_move(board: chess.Board, args: argparse.Namespace) -> chess.Move:
    """The scripted move of this ply (--moves), else the move this engine's --play mode picks."""
    script = args.moves.split(",") if args.moves else []
    ply = len(board.move_stack)
    if ply < len(script) and chess.Move.from_uci(script[ply]) in board.legal_moves:
        return chess.Move.from_uci(script[ply])
    if args.play == "first":
        return next(iter(board.legal_moves))
    if args.play == "greedy":
        return greedy_move(board, args.seed)
    return hashed_move(board, args.seed)


def illegal_move(board: chess.Board) -> str:
    """A move in UCI notation that is not legal in this position."""
    for from_square in chess.SQUARES:
        for to_square in chess.SQUARES:
            move = chess.Move(from_square, to_square)
            if from_square != to_square and not board.is_legal(move) and not board.is_pseudo_legal(move):
                return move.uci()
    return "a1a1"


def set_position(tokens: list[str], chess960: bool = False) -> chess.Board:
    """The board of a `position` command."""
    moves_at = tokens.index("moves") if "moves" in tokens else len(tokens)
    if len(tokens) > 1 and tokens[1] == "fen":
        board = chess.Board(" ".join(tokens[2:moves_at]), chess960=chess960)
    else:
        board = chess.Board(chess960=chess960)
    for uci in tokens[moves_at + 1:]:
        board.push_uci(uci)
    return board


def go_seconds(tokens: list[str], board: chess.Board) -> float:
    """Seconds the engine may use according to `go`: the mover's clock, or the movetime (0 if neither)."""
    values = dict(zip(tokens[1::2], tokens[2::2]))
    own = "wtime" if board.turn == chess.WHITE else "btime"
    for key in (own, "movetime"):
        if key in values:
            return max(0, int(values[key])) / 1000.0
    return 0.0


def answer_go(tokens: list[str], board: chess.Board, moves_in_game: int, args: argparse.Namespace,
              out: TextIO) -> None:
    """Reply to one `go` according to the script (may exit or block for --misbehave crash/stall)."""
    misbehave = args.misbehave if moves_in_game >= args.after else None
    if misbehave == "crash":
        sys.exit(CRASH_STATUS)
    if misbehave == "stall":
        time.sleep(STALL_SECONDS)
    if misbehave == "flag":
        time.sleep(go_seconds(tokens, board) + FLAG_EXTRA_SECONDS)
    score = args.score if args.score is not None else 0
    if args.multipv and misbehave is None and not board.is_game_over():
        # MultiPV lines: the move the script plays first, then the others by UCI text, each 10 cp worse.
        best = choose_move(board, args)
        others = sorted((m for m in board.legal_moves if m != best), key=lambda m: m.uci())
        for rank, move in enumerate([best] + others[:args.multipv - 1], start=1):
            out.write(f"info depth 1 seldepth 1 multipv {rank} score cp {score - 10 * (rank - 1)} nodes 1 time 1 "
                      f"nps 1000 pv {board.uci(move)}\n")
    else:
        out.write(f"info depth 1 seldepth 1 score cp {score} nodes 1 time 1 nps 1000\n")
    if misbehave == "illegal":
        out.write(f"bestmove {illegal_move(board)}\n")
    elif misbehave == "null":
        out.write("bestmove 0000\n")
    elif misbehave == "none" or board.is_game_over():
        out.write("bestmove (none)\n")
    else:
        deviate = args.deviate and moves_in_game % args.deviate == 0
        move = next(iter(board.legal_moves)) if deviate else choose_move(board, args)
        line = f"bestmove {board.uci(move)}"
        if args.ponder:
            board.push(move)
            if not board.is_game_over():
                line += f" ponder {board.uci(hashed_move(board, args.seed))}"
            board.pop()
        out.write(line + "\n")
    out.flush()


def run(args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    """The UCI loop."""
    board = chess.Board()
    chess960 = False
    moves_in_game = 0
    pondering: Optional[list[str]] = None  # the `go ponder` waiting for ponderhit or stop
    games = 0  # ucinewgame commands received
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    for line in inp:
        if log is not None:
            log.write(line)
            log.flush()
        tokens = line.split()
        if not tokens:
            continue
        command = tokens[0]
        if command == "uci":
            if args.hold_file is not None and args.hold_game == 0:
                hold(args.hold_file)
            out.write(f"id name {args.name or 'scripted-' + (args.misbehave or args.play)}\nid author tests\n")
            if args.options:
                out.write("option name Skill type spin default 1 min 0 max 20\n")
                out.write("option name Flag type check default false\n")
            if args.chess960:
                out.write("option name UCI_Chess960 type check default false\n")
            if args.ponder:
                out.write("option name Ponder type check default false\n")
            if args.multipv:
                out.write("option name MultiPV type spin default 1 min 1 max 256\n")
            out.write("uciok\n")
            out.flush()
        elif command == "isready":
            out.write("readyok\n")
            out.flush()
        elif command == "setoption" and tokens[1:3] == ["name", "UCI_Chess960"] and args.chess960:
            chess960 = tokens[-1] == "true"
        elif command == "setoption" and tokens[1:3] == ["name", "MultiPV"] and args.multipv:
            args.multipv = max(1, int(tokens[-1]))
        elif command == "ucinewgame":
            moves_in_game = 0
            games += 1
        elif command == "position":
            board = set_position(tokens, chess960)
        elif command == "go" and "ponder" in tokens:
            pondering = tokens
        elif command == "go":
            moves_in_game += 1
            if args.hold_file is not None and games >= args.hold_game:
                hold(args.hold_file)
            time.sleep(args.delay)
            answer_go(tokens, board, moves_in_game, args, out)
        elif command in ("ponderhit", "stop") and pondering is not None:
            moves_in_game += command == "ponderhit"
            if command == "stop":
                time.sleep(args.stop_delay)
            answer_go(pondering, board, moves_in_game, args, out)
            pondering = None
        elif command == "quit":
            return 0
    return 0


def main() -> int:
    """Entry point."""
    args = build_parser().parse_args()
    if args.fail_start:
        return 1
    return run(args, sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
