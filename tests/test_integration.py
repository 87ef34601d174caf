"""The recipes for other programs, run as printed in the README's quick start and in docs/clients.md
where the program is here: python-chess (MultiPV analysis), lichess-bot's engine block, PolyGlot's ini
file in xboard mode, and the option names in the cutechess-cli and fastchess commands. The pages'
/path/to/garfish is this checkout."""

from __future__ import annotations

import contextlib
import io
import logging
import re
import shlex
import shutil
from pathlib import Path
from typing import Optional

import chess
import chess.engine
import pytest

from conftest import ROOT
from rawpipe import RawEngine

README = ROOT / "README.md"
CLIENTS = ROOT / "docs" / "clients.md"
PAGES = pytest.mark.parametrize("page", [README, CLIENTS], ids=["README", "docs/clients"])
PLACEHOLDER = "/path/to/garfish"
POLYGLOT_PLACES = ("/usr/games/polyglot", "/usr/bin/polyglot")  # Debian installs it under /usr/games
GARFISH_OPTIONS = ("Hash", "Clear Hash", "Threads", "Move Overhead", "Ponder", "UCI_Chess960")
# Castling is the only mate in one (as in test_uci_client): 1.O-O# in standard chess; for the
# Chess960 king on f1 the castling f1h1, which xboard writes O-O.
CASTLE_MATES = "4R3/8/8/8/8/5k2/6R1/4K2R w K - 0 1"
CASTLE_MATES_960 = "4R3/8/8/8/8/5k2/6R1/5K1R w H - 0 1"


def page_block(page: Path, heading: str, language: str) -> str:
    """The first ```language block under the heading `## heading` or `### heading` of a page, with
    /path/to/garfish made this checkout."""
    text = page.read_text()
    found = re.search(rf"^#{{2,3}} {re.escape(heading)}\n", text, re.MULTILINE)
    assert found, f"{page.name} has no section {heading!r}"
    section = text[found.end():]
    start = section.index(f"```{language}\n") + len(f"```{language}\n")
    return section[start:section.index("```", start)].replace(PLACEHOLDER, str(ROOT))


@PAGES
def test_python_chess_example(page: Path) -> None:
    """The python-chess example as printed: a move, then MultiPV analysis with three different lines."""
    code = page_block(page, "python-chess", "python")
    assert "multipv=3" in code

    def run(source: str) -> tuple[list[str], Optional[Exception]]:
        """Execute the example; its printed lines and the engine error it raised, if any."""
        out = io.StringIO()
        error: Optional[Exception] = None
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(source, f"{page.name} (python-chess)", "exec"), {})
            except chess.engine.EngineError as exc:
                error = exc
        return out.getvalue().splitlines(), error

    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    printed, error = run(code)
    assert error is None, error
    assert chess.Move.from_uci(printed[0]) in board.legal_moves
    lines = [line.split(" ", 2) for line in printed[1:]]
    assert [number for number, _, _ in lines] == ["1", "2", "3"]
    assert all(re.fullmatch(r"[+-]\d+|#[+-]\d+", score) and line.startswith("3. ") for _, score, line in lines)
    assert len({line.split()[1] for _, _, line in lines}) == 3  # three different first moves


def simple_yaml(text: str) -> dict:
    """The nested mappings of a small YAML block (two-space indents, `key: value`, quoted strings)."""
    root: dict = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        key, _, value = raw.strip().partition(":")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if value.strip():
            parent[key] = value.strip().strip('"')
        else:
            parent[key] = {}
            stack.append((indent, parent[key]))
    return root


@PAGES
def test_lichess_bot_engine_block(page: Path, caplog: pytest.LogCaptureFixture) -> None:
    """lichess-bot's engine block: dir + name start Garfish over UCI, which declares Ponder and
    every option in uci_options, takes their values without an error and then plays."""
    engine_block = simple_yaml(page_block(page, "lichess-bot", "yaml"))["engine"]
    assert engine_block["protocol"] == "uci" and engine_block["ponder"] == "true"
    command = Path(engine_block["dir"]) / engine_block["name"]
    assert command == ROOT / "garfish"
    options = {name: int(value) for name, value in engine_block["uci_options"].items()}
    assert set(options) == {"Move Overhead", "Threads", "Hash"}
    caplog.set_level(logging.DEBUG, logger="chess.engine")  # every line the engine sends: ">> ..."
    with chess.engine.SimpleEngine.popen_uci([str(command)], timeout=60) as engine:
        assert "Ponder" in engine.options
        engine.configure(options)  # python-chess refuses an undeclared option or a value out of range
        engine.ping()
        assert engine.play(chess.Board(), chess.engine.Limit(depth=3)).move in chess.Board().legal_moves
    received = [record.getMessage() for record in caplog.records if ">> " in record.getMessage()]
    assert any("readyok" in text for text in received)
    assert not [text for text in received if "info string" in text], received


def polyglot_command() -> Optional[str]:
    """The polyglot program, or None when it is not installed."""
    found = shutil.which("polyglot")
    return found or next((place for place in POLYGLOT_PLACES if Path(place).is_file()), None)


def test_polyglot_ini_plays_in_xboard_mode(tmp_path: Path) -> None:
    """PolyGlot with the garfish.ini of docs/clients.md, spoken to in xboard: it offers Chess960, plays a move
    from the start, castles kingside for the mate in standard chess (e1g1) and in Chess960 (O-O)."""
    polyglot = polyglot_command()
    if polyglot is None:
        pytest.skip("polyglot is not installed (Debian/Ubuntu: apt-get install polyglot)")
    ini = tmp_path / "garfish.ini"
    ini.write_text(page_block(CLIENTS, "xboard and WinBoard, through PolyGlot", "ini"))
    xboard = RawEngine([polyglot, str(ini)], cwd=tmp_path)
    try:
        xboard.send("xboard")
        xboard.send("protover 2")
        _, features = xboard.expect(lambda line: line == "feature done=1", 30)
        assert 'feature variants="normal,fischerandom"' in features
        assert 'feature option="Move Overhead -spin 30 0 5000"' in features
        for setup, expected in ((["new"], None),
                                (["new", "force", f"setboard {CASTLE_MATES}"], "move e1g1"),
                                (["new", "variant fischerandom", "force", f"setboard {CASTLE_MATES_960}"], "move O-O")):
            for line in setup + ["st 1", "go"]:
                xboard.send(line)
            move, _ = xboard.expect(lambda line: line.startswith("move "), 30)
            if expected is None:
                assert chess.Move.from_uci(move.split()[1]) in chess.Board().legal_moves
            else:
                assert move.startswith(expected), move
        xboard.send("quit")
        xboard.proc.wait(timeout=10)
    finally:
        xboard.close()


@PAGES
def test_match_commands_set_only_options_garfish_declares(page: Path) -> None:
    """The option.NAME=VALUE of Garfish's engine in the cutechess-cli and fastchess commands are
    Garfish's own options (a misspelt one would be refused or ignored)."""
    commands = page_block(page, "cutechess-cli and fastchess", "sh").replace("\\\n", " ")
    checked = 0
    for command in commands.splitlines():
        if command.lstrip().startswith("#") or not command.strip():
            continue
        words = shlex.split(command)
        engines = " ".join(words).split(" -engine ")[1:]
        garfish = [engine for engine in engines if f"cmd={ROOT}/garfish" in engine]
        assert len(garfish) == 1, command
        for name in re.findall(r"option\.([^=]+)=", garfish[0]):
            assert name in GARFISH_OPTIONS, (name, command)
            checked += 1
    assert checked >= 2
