"""The EvalFile option: a network file selects the network's evaluation, <classic> the hand-written
one; a file that cannot be used is reported and the evaluation in use kept; the default."""

from __future__ import annotations

import shutil
from pathlib import Path

import chess
import chess.engine
import pytest

import garfish.engine.evaluation.evalfile as evalfile
from conftest import ENGINE_CMD, ROOT
from garfish.engine.evaluation.classic import evaluate
from garfish.engine.evaluation.network import HEADER, encode_network, forward, network_name, read_network, write_network
from test_nnue import constant_network, material_network
from test_uci_engine import Session, errors, session  # noqa: F401 (session: the fixture of a started engine)

CLASSIC_NOTE = "the hand-written evaluation (<classic>)"


def default_note() -> str:
    """How the engine names its default network."""
    evaluator = evalfile.load_evaluator(evalfile.DEFAULT_EVAL_FILE)
    assert evaluator is not None
    return f"the network {evaluator.describe()}"


def scores(lines: list[str]) -> list[str]:
    """The `score ...` words of the info lines."""
    return [" ".join(line.split(" score ")[1].split()[:2]) for line in lines if " score " in line]


def search(session: Session, *lines: str) -> list[str]:
    """The score words of the info lines of the search the last line starts, run to its end (Session.send
    would stop it)."""
    for line in lines:
        session.engine.handle(line)
    assert session.engine.engine.search_thread is not None
    session.engine.engine.search_thread.join()
    return scores(session.output())


@pytest.fixture
def network_file(tmp_path: Path) -> Path:
    """A network that scores every position 1234 for the side to move."""
    return write_network(constant_network(1234), tmp_path)


def network_note(path: Path) -> str:
    """How the engine names the constant network of network_file."""
    return f"the network {path.name} (768x2 -> 1x2 CReLU -> 1, 1 output bucket)"


def test_a_network_file_selects_the_network_and_classic_goes_back(session: Session, network_file: Path) -> None:
    assert session.send("eval")[0].endswith(f"by {default_note()}")
    lines = session.send(f"setoption name EvalFile value {network_file}")
    assert lines == [f"info string EvalFile {network_file}: {network_note(network_file)}"]
    assert session.send("eval") == [
        f"info string eval 1234 cp (side to move), 1234 cp (white), by {network_note(network_file)}"]
    # Every static evaluation is 1234 for the side to move: after one ply the root scores -1234.
    assert search(session, "position startpos moves e2e4", "go depth 2") == ["cp -1234", "cp 1234"]
    lines = session.send("setoption name EvalFile value <classic>")
    assert lines == [f"info string EvalFile <classic>: {CLASSIC_NOTE}"]
    classic = search(session, "go depth 2")
    assert len(classic) == 2 and not {"cp 1234", "cp -1234"} & set(classic)
    assert session.send("eval") == [f"info string eval -34 cp (side to move), 34 cp (white), by {CLASSIC_NOTE}"]


def damaged_files(folder: Path, good: Path) -> dict[str, tuple[Path, str]]:
    """Files that are no network, each with the reason the engine gives."""
    data = good.read_bytes()
    flipped = bytearray(data)
    flipped[HEADER.size + 40] ^= 1
    cases = {"truncated.gfnn": (data[:-500], "bytes where the header implies"),
             "corrupt.gfnn": (bytes(flipped), "checksum mismatch (the file is corrupt)"),
             "text.gfnn": (b"not a network at all, just some text\n" * 4, "not a Garfish network"),
             "empty.gfnn": (b"", "too short for a network file (0 bytes)")}
    files = {}
    for name, (content, reason) in cases.items():
        (folder / name).write_bytes(content)
        files[name] = (folder / name, reason)
    files["missing.gfnn"] = (folder / "missing.gfnn", "no such file")
    files["a folder"] = (folder, "cannot read")
    return files


def test_a_file_that_cannot_be_used_is_reported_and_the_evaluation_kept(session: Session, network_file: Path,
                                                                        tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    for kept, note in ((None, default_note()), ("<classic>", CLASSIC_NOTE),
                       (network_file, network_note(network_file))):
        if kept is not None:
            session.send(f"setoption name EvalFile value {kept}")
        for path, reason in damaged_files(bad, network_file).values():
            lines = session.send(f"setoption name EvalFile value {path}")
            assert len(lines) == 1 and lines[0].startswith(f"info string error: EvalFile {path}: "), lines
            assert reason in lines[0] and lines[0].endswith(f"; keeping {note}"), lines
            assert session.engine.options.eval_file.value == (str(kept) if kept else evalfile.DEFAULT_EVAL_FILE)
            assert session.send("eval")[0].endswith(f"by {note}")
    assert search(session, "go depth 2") == ["cp -1234", "cp 1234"]


def test_a_relative_path_is_found_in_the_working_folder_then_in_the_nets_folder(
        session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, nets = tmp_path / "work", tmp_path / "nets"
    work.mkdir()
    nets.mkdir()
    (work / "net.gfnn").write_bytes(encode_network(constant_network(111)))
    (nets / "net.gfnn").write_bytes(encode_network(constant_network(222)))
    (nets / "shipped.gfnn").write_bytes(encode_network(constant_network(333)))
    monkeypatch.chdir(work)
    monkeypatch.setattr(evalfile, "NETS_DIR", nets)
    session.send("setoption name EvalFile value net.gfnn")
    assert session.send("eval")[0].startswith("info string eval 111 cp")
    session.send("setoption name EvalFile value shipped.gfnn")
    assert session.send("eval")[0].startswith("info string eval 333 cp")
    lines = session.send("setoption name EvalFile value nowhere.gfnn")
    assert errors(lines) == [f"info string error: EvalFile nowhere.gfnn: no such file in the working folder ({work}) "
                             f"nor in the engine's nets folder ({nets}); keeping the network shipped.gfnn "
                             "(768x2 -> 1x2 CReLU -> 1, 1 output bucket)"]


def test_the_engine_starts_with_the_default_network_or_falls_back_to_classic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_network(material_network(), tmp_path)
    monkeypatch.setattr(evalfile, "NETS_DIR", tmp_path)
    for default, warning, evaluation in (
            (path.name, [], f"the network {path.name} (768x2 -> 1x2 CReLU -> 1, 1 output bucket)"),
            ("nn-000000000000.gfnn", [f"info string error: EvalFile nn-000000000000.gfnn: no such file in the working "
                                      f"folder ({Path.cwd()}) nor in the engine's nets folder ({tmp_path}); using "
                                      "<classic>, the hand-written evaluation"], CLASSIC_NOTE)):
        monkeypatch.setattr(evalfile, "DEFAULT_EVAL_FILE", default)
        session = Session()
        try:
            assert f"option name EvalFile type string default {default}" in session.send("uci")
            assert session.built() == warning + ["readyok"]
            assert session.send("eval")[0].endswith(f"by {evaluation}")
            assert session.send("isready") == ["readyok"]  # said once
        finally:
            session.engine.handle("quit")


def test_the_default_is_a_shipped_network_named_in_one_constant() -> None:
    """DEFAULT_EVAL_FILE names a network of engine/nets/, which its README presents as the default."""
    assert evalfile.NETS_DIR == ROOT / "engine" / "nets" and (evalfile.NETS_DIR / "README.md").is_file()
    assert (evalfile.NETS_DIR / evalfile.DEFAULT_EVAL_FILE).is_file()
    notes = (evalfile.NETS_DIR / "README.md").read_text()
    assert f"The default, `DEFAULT_EVAL_FILE`: {evalfile.DEFAULT_EVAL_FILE}" in notes


def test_a_real_engine_searches_with_the_network_python_chess_sets(network_file: Path, tmp_path: Path) -> None:
    shutil.copy(network_file, tmp_path / "copy.gfnn")
    with chess.engine.SimpleEngine.popen_uci(ENGINE_CMD, cwd=ROOT) as engine:
        engine.configure({"EvalFile": str(tmp_path / "copy.gfnn")})
        info = engine.analyse(chess.Board(), chess.engine.Limit(depth=1))
        assert info["score"].relative == chess.engine.Cp(-1234)
        engine.configure({"EvalFile": "<classic>"})
        info = engine.analyse(chess.Board(), chess.engine.Limit(depth=1))
        assert info["score"].relative != chess.engine.Cp(-1234)


def test_every_shipped_network_loads_under_its_hash_and_says_how_it_was_made() -> None:
    shipped = sorted(evalfile.NETS_DIR.glob("*.gfnn"))
    for path in shipped:
        network = read_network(path)
        assert path.name == network_name(path.read_bytes()), path
        assert path.stat().st_size < 4_000_000 and path.name in (evalfile.NETS_DIR / "README.md").read_text()
        assert "command: garfish train" in network.description and "sha256" in network.description
        evaluator = evalfile.load_evaluator(path.name)
        assert evaluator is not None
        for fen in (chess.STARTING_FEN, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 1 9"):
            board = chess.Board(fen)
            assert evaluator.evaluate(board) == forward(network, board, base=evaluate)
            assert evaluator.evaluate(board.mirror()) == evaluator.evaluate(board)
