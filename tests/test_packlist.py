"""`garfish pack --verify FOLDER` (garfish.arena.packlist): packs made by the test, as garfish datagen makes them,
judged against a list (good, partial, torn, differing, corrupt, missing, extra); the list that garfish installs,
docs/data.md's table of it, and the shared packs it holds."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from pathlib import Path

import chess
import pytest

from conftest import CLI_TIMEOUT, ROOT, data_missing
from garfish.arena import packlist
from garfish.arena.data import data_dir
from garfish.arena.datagen import FinishedGame, Output

SETTINGS = {"seed": 1, "nodes": 10, "random_plies": 0, "max_plies": 40, "adjudicate_score": 2500,
            "adjudicate_ply": 20, "openings": "book.epd", "openings_sha256": "0" * 16, "engine": "e", "options": {}}
LIST_HEADER = "\t".join(packlist.COLUMNS) + "\n"


def played_games(count: int, seed: int) -> list[list[str]]:
    """`count` games of random legal moves from the start (5 to 40 plies), as `FEN;SCORE;BEST;RESULT` lines."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        board, result, plies, lines = chess.Board(), rng.choice(["1", "0.5", "0"]), rng.randint(5, 40), []
        while len(lines) < plies and not board.is_game_over():
            move = rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
            lines.append(f"{board.fen()};{rng.randint(-500, 500)};{move.uci()};{result}")
            board.push(move)
        games.append(lines)
    return games


def run_pack(*args: str) -> subprocess.CompletedProcess:
    """`python -m garfish.uci pack ...`, its output captured."""
    return subprocess.run([sys.executable, "-m", "garfish.uci", "pack", *args], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=CLI_TIMEOUT)


def datagen_pack(path: Path, games: list[list[str]]) -> bytes:
    """A pack of these games as garfish datagen writes it (a block a game, its sidecar beside it); its bytes."""
    output = Output(path, SETTINGS, print)
    for number, game in enumerate(games, 1):
        output.append(FinishedGame(number, "".join(line + "\n" for line in game), len(game), game[0].split(";")[3],
                                   "test"))
    output.close()
    return path.read_bytes()


def list_line(name: str, seed: int, games: list[list[str]], data: bytes, digits: int = 64, size: bool = True) -> str:
    """The list's line of a pack of these games and bytes (its SHA-256 cut to `digits`, its size or none)."""
    sha = hashlib.sha256(data).hexdigest()[:digits]
    return "\t".join([name, str(seed), "1000", str(len(games)), str(sum(map(len, games))),
                      str(len(data)) if size else "-", sha, "verified" if size else "recorded", f"seed {seed}"]) + "\n"


def run_verify(folder: Path, packs: Path) -> subprocess.CompletedProcess:
    """`garfish pack --verify FOLDER --list PACKS`, its output captured."""
    return run_pack("--verify", str(folder), "--list", str(packs))


def test_verify_finds_good_partial_differing_corrupt_missing_and_extra_packs(tmp_path: Path) -> None:
    """Small packs made as datagen makes them, checked against a list: each file's verdict and why, the missing
    ones by seed, and the exit status (1 while one differs or is corrupt, 3 when only incomplete, 0 when all is
    as listed)."""
    folder, games = tmp_path / "data", played_games(6, seed=20)
    folder.mkdir()
    made = {}  # name -> (games, bytes) of the whole pack, as listed
    for seed, name in enumerate(["good", "prefix", "short", "torn", "differs", "corrupt", "missing"], 1):
        chosen = games[seed % 3:seed % 3 + 4]
        made[name] = chosen, datagen_pack(tmp_path / f"{name}.gfpk", chosen)
    for name in ("good", "prefix"):
        (folder / f"{name}.gfpk").write_bytes(made[name][1])
    datagen_pack(folder / "short.gfpk", made["short"][0][:2])  # the first 2 of 4 games: a run stopped
    torn = datagen_pack(folder / "torn.gfpk", made["torn"][0][:3])
    (folder / "torn.gfpk").write_bytes(torn + made["torn"][1][len(torn):len(torn) + 20])  # the 4th being written
    last = made["differs"][0][3]
    other = "0" if last[0].endswith(";1") else "1"  # the last game's RESULT changed: as many games and positions
    datagen_pack(folder / "differs.gfpk", made["differs"][0][:3] + [[line[:line.rindex(";") + 1] + other
                                                                      for line in last]])
    corrupt = bytearray(made["corrupt"][1])
    corrupt[len(corrupt) // 2] ^= 0xFF
    (folder / "corrupt.gfpk").write_bytes(bytes(corrupt))
    (folder / "copy.gfpk").write_bytes(made["good"][1])  # a listed pack under another name
    (folder / "other.gfpk").write_bytes(datagen_pack(tmp_path / "other.gfpk", games[:1]))
    (folder / "notes.txt").write_text("not a pack: not looked at\n")
    packs = tmp_path / "packs.tsv"
    packs.write_text("# a list\n" + LIST_HEADER + "".join(
        list_line(f"{name}.gfpk", seed, *made[name], **({"digits": 16, "size": False} if name == "prefix" else {}))
        for seed, name in enumerate(made, 1)))
    proc = run_verify(folder, packs)
    assert proc.returncode == packlist.EXIT_DIFFERS, proc.stderr
    verdicts = {line.split(": ")[0]: line.split(": ")[1] for line in proc.stdout.splitlines()[1:-2]}
    assert verdicts == {"good.gfpk": "ok", "prefix.gfpk": "ok", "short.gfpk": "partial", "torn.gfpk": "partial",
                        "differs.gfpk": "differs", "corrupt.gfpk": "corrupt", "copy.gfpk": "extra",
                        "other.gfpk": "extra"}
    lines = {line.split(": ")[0]: line for line in proc.stdout.splitlines()}
    assert "the 16 digits of SHA-256 it keeps as listed" in lines["prefix.gfpk"]
    assert "2 of 4 games" in lines["short.gfpk"] and "--games 4 --seed 3 -j 1" in lines["short.gfpk"]
    assert "3 of 4 games" in lines["torn.gfpk"] and "an unfinished write of 20 bytes" in lines["torn.gfpk"]
    assert "SHA-256" in lines["differs.gfpk"] and "games" not in lines["differs.gfpk"]
    assert "corrupt block" in lines["corrupt.gfpk"]
    assert "its bytes are those of good.gfpk" in lines["copy.gfpk"] and "those of" not in lines["other.gfpk"]
    assert proc.stdout.splitlines()[-2] == "missing: 1 of 7 listed packs (1,000 nodes: seed 7)"
    assert proc.stdout.splitlines()[-1].endswith(
        "2 ok, 2 partial, 1 differs, 1 corrupt, 2 extra, 1 missing: NOT as listed (exit status 1)")
    for name in ("differs", "corrupt"):
        (folder / f"{name}.gfpk").unlink()
    assert run_verify(folder, packs).returncode == packlist.EXIT_INCOMPLETE
    for name in ("prefix", "short", "torn", "copy", "other"):
        (folder / f"{name}.gfpk").unlink()
    packs.write_text(LIST_HEADER + list_line("good.gfpk", 1, *made["good"]))
    proc = run_verify(folder, packs)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].endswith("all as listed (exit status 0)")


@pytest.mark.parametrize("line, reason", [
    ("x.txt\t1\t1000\t1\t1\t-\t" + "0" * 16 + "\trecorded\tn", "not the name of a pack"),
    ("x.gfpk\tone\t1000\t1\t1\t-\t" + "0" * 16 + "\trecorded\tn", "seed 'one' is not a number"),
    ("x.gfpk\t1\t1000\t1\t1\t?\t" + "0" * 16 + "\trecorded\tn", "bytes '?'"),
    ("x.gfpk\t1\t1000\t1\t1\t-\t" + "0" * 15 + "\trecorded\tn", "sha256"),
    ("x.gfpk\t1\t1000\t1\t1\t-\t" + "0" * 16 + "\tguessed\tn", "status 'guessed'"),
    ("x.gfpk\t1\t1000\t1\t1\t-\t" + "0" * 16 + "\trecorded", "8 tab-separated fields"),
])
def test_a_list_line_that_is_no_pack_is_a_usage_error(tmp_path: Path, line: str, reason: str) -> None:
    packs = tmp_path / "packs.tsv"
    packs.write_text(LIST_HEADER + line + "\n")
    proc = run_verify(tmp_path, packs)
    assert proc.returncode == 2 and "packs.tsv:2: " in proc.stderr and reason in proc.stderr


def test_a_list_without_its_header_or_with_a_pack_twice_is_refused(tmp_path: Path) -> None:
    line = "x.gfpk\t1\t1000\t1\t1\t-\t" + "0" * 16 + "\trecorded\tn\n"
    with pytest.raises(ValueError, match="header line"):
        packlist.read_list(write(tmp_path / "a.tsv", line))
    with pytest.raises(ValueError, match="listed twice"):
        packlist.read_list(write(tmp_path / "b.tsv", LIST_HEADER + line + line))
    assert run_pack("--verify", str(tmp_path / "none")).returncode == 2


def write(path: Path, text: str) -> Path:
    """A file of this text."""
    path.write_text(text)
    return path


def docs_table(packs: list[packlist.Listed]) -> list[str]:
    """docs/data.md's table of the packs: a row a line of the list."""
    rows = ["| File | Seed | Nodes a move | Games | Positions | Bytes | SHA-256 | Status | Note |",
            "|---|---|---|---|---|---|---|---|---|"]
    for listed in packs:
        size = f"{listed.size:,}" if listed.size is not None else "-"
        sha = listed.sha256 if len(listed.sha256) == packlist.SHA_DIGITS else f"{listed.sha256}..."
        rows.append(f"| `{listed.file}` | {listed.seed} | {listed.nodes:,} | {listed.games:,} | "
                    f"{listed.positions:,} | {size} | {sha} | {listed.status} | {listed.note} |")
    return rows


def test_the_data_pages_table_is_the_list() -> None:
    """The list installed with garfish (packs.tsv) reads, holds the shared packs of seeds 31 and 32 as verified, and
    docs/data.md's table of the packs is its rows, line for line (on failure, the table to paste)."""
    packs = packlist.read_list(packlist.default_list())
    verified = {listed.seed: listed for listed in packs if listed.status == "verified"}
    assert verified[31].sha256.startswith("c1b68520a0518d15") and verified[31].positions == 4_186_372
    assert verified[32].sha256.startswith("74e9f577743b7070") and verified[32].positions == 4_189_494
    assert all(len(listed.sha256) == packlist.SHA_DIGITS and listed.size for listed in verified.values())
    expected = docs_table(packs)
    lines = (ROOT / "docs" / "data.md").read_text().splitlines()
    assert expected[0] in lines, "\n".join(expected)
    start = lines.index(expected[0])
    assert lines[start:start + len(expected) + 1] == expected + [""], "\n".join(expected)


def test_the_shared_packs_are_as_listed() -> None:
    """No pack in ../shared/data/train contradicts the list: each listed one there is the pack its command makes
    (ok) or the first games of it (partial: a pack stopped part-way, which the same command continues), none
    differs or is corrupt. Seeds 31 to 34 are whole there; packs the folder gains between rounds before the list
    records them are extra, not wrong."""
    folder = data_dir()
    if folder is None or not (folder / "train" / "sf15-1knodes-seed31.gfpk").is_file():
        data_missing("no shared packs (../shared/data/train/sf15-1knodes-seed31.gfpk)")
        return
    findings = packlist.verify(folder / "train", packlist.read_list(packlist.default_list()))
    verdicts = {finding.file: finding.verdict for finding in findings if finding.verdict != "missing"}
    assert {name: verdict for name, verdict in verdicts.items() if verdict not in ("ok", "partial", "extra")} == {}
    assert all(verdicts[f"sf15-1knodes-seed{seed}.gfpk"] == "ok" for seed in (31, 32, 33, 34)), verdicts
