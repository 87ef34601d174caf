"""Evaluation: colour symmetry, sane values, and the same results compiled or interpreted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess

from garfish.engine import kernel
from garfish.engine.evaluation.classic import evaluate
from conftest import run_interpreted
from positions import random_game_boards


def white_score(board: chess.Board) -> int:
    """Evaluation from White's point of view."""
    score = evaluate(board)
    return score if board.turn == chess.WHITE else -score


def test_mirrored_position_gets_the_negated_white_score() -> None:
    count = 0
    for board in random_game_boards(games=40, seed=5):
        assert white_score(board.mirror()) == -white_score(board), board.fen()
        count += 1
    assert count > 2000


def test_material_and_terms_point_the_right_way() -> None:
    start = chess.Board()
    assert abs(evaluate(start)) < 50
    queen_up = chess.Board("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    assert evaluate(queen_up) > 700
    assert evaluate(chess.Board("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1")) < -700
    # A passed pawn on the seventh is worth far more than one at home.
    far = chess.Board("4k3/8/8/8/8/8/P7/4K3 w - - 0 1")
    near = chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert evaluate(near) > evaluate(far) + 100
    # Doubled, isolated pawns are worse than a healthy pair.
    healthy = chess.Board("4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1")
    doubled = chess.Board("4k3/8/8/8/8/3P4/3P4/4K3 w - - 0 1")
    assert evaluate(healthy) > evaluate(doubled)
    # A lone minor piece cannot win: scaled towards a draw.
    assert abs(evaluate(chess.Board("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1"))) < 60


def test_compiled_and_interpreted_kernels_agree() -> None:
    """The hand-written evaluation's kernel gives the same scores run as plain Python (NUMBA_DISABLE_JIT=1, in a
    child that imports it by its own name, garfish.engine.evaluation.classic, and no 0.2.0 name) as compiled."""
    boards = [b for i, b in enumerate(random_game_boards(games=4, seed=9)) if i % 7 == 0]
    fens = [b.fen() for b in boards]
    script = (
        "import json, sys, chess\n"
        "from garfish.engine.evaluation.classic import evaluate, evaluate_kernel\n"
        "assert not hasattr(evaluate_kernel, 'py_func'), 'compiled, not interpreted'\n"
        "assert not [name for name in sys.modules if name.split('.')[0] == 'engine'], 'a second engine tree'\n"
        "print(json.dumps([evaluate(chess.Board(f)) for f in json.loads(sys.stdin.read())]))\n"
    )
    assert len(boards) > 30
    assert run_interpreted(script, fens) == [evaluate(b) for b in boards]


def test_numba_cache_goes_somewhere_writable_when_the_package_is_read_only(tmp_path, monkeypatch) -> None:
    package = tmp_path / "site-packages" / "engine"
    package.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    writable = {str(home), str(tmp_path)}
    monkeypatch.setattr(kernel.os, "access", lambda path, mode: str(path) in writable)
    # Read-only package folder: the cache moves to the user's cache folder.
    chosen = kernel.numba_cache_dir(package, {"HOME": str(home)}, 1000)
    assert chosen == str(home / ".cache" / "garfish" / "numba") and Path(chosen).is_dir()
    # An explicit NUMBA_CACHE_DIR, or a writable package folder, is left alone.
    assert kernel.numba_cache_dir(package, {"NUMBA_CACHE_DIR": "/x", "HOME": str(home)}, 1000) is None
    writable.add(str(package))
    assert kernel.numba_cache_dir(package, {"HOME": str(home)}, 1000) is None


def test_a_read_only_install_sets_numbas_cache_folder_not_the_environment(tmp_path) -> None:
    # Import the kernels' base module as if the package folder were read-only (os.access says
    # nothing is writable): Numba's config gets the folder, os.environ stays as it was.
    script = (
        "import json, os, numba\n"
        "os.access = lambda path, mode: False\n"
        "import garfish.engine.board.bits\n"
        "print(json.dumps([numba.config.CACHE_DIR, os.environ.get('NUMBA_CACHE_DIR')]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["HOME"] = str(tmp_path)
    env.pop("XDG_CACHE_HOME", None)
    out = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    folder, environment = json.loads(out.stdout)
    assert Path(folder).parent == tmp_path / ".cache" / "garfish" / "numba" and environment is None
    assert Path(folder).name == f"kernels-{kernel.sources_key(Path(kernel.__file__).resolve().parent)}"


def test_the_kernels_cache_in_a_folder_named_by_their_sources(tmp_path) -> None:
    """A change to any module a kernel is compiled from (a callee's file alone, as an update may bring) moves
    the cache to a new folder, where Numba compiles everything again; a change elsewhere in engine/ does not."""
    package = Path(kernel.__file__).resolve().parent
    copy = tmp_path / "engine"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    key = kernel.sources_key(copy)
    assert key == kernel.sources_key(package) and len(key) == 16
    import numba

    assert numba.config.CACHE_DIR.endswith(f"kernels-{key}")
    bench = copy / "services" / "bench.py"
    bench.write_text(bench.read_text() + "\n# not a kernel\n")
    assert kernel.sources_key(copy) == key
    callee = copy / "evaluation" / "accumulators.py"
    callee.write_text(callee.read_text() + "\n# a callee of the search's kernels\n")
    assert kernel.sources_key(copy) != key
