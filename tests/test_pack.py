"""`garfish pack` and the .gfpk format: games packed and unpacked to the same text, byte for byte;
datagen writing packs; the trainer reading them as it reads text."""

from __future__ import annotations

import gzip
import random
import shlex
import subprocess
import sys
import zlib
from dataclasses import fields
from pathlib import Path
from typing import Optional

import chess
import numpy as np
import pytest

from conftest import CLI_TIMEOUT, ROOT, SCRIPTED, data_missing
from garfish.arena import pack
from garfish.arena.data import data_dir
from garfish.arena.datagen import FinishedGame, Output
from garfish.arena.pack import PACK_HEADER, PackError, Position, move_code, move_uci
from garfish.engine.board.moves import MOVES_BY_CODE
from garfish.train.cli import main as train_main
from garfish.train.data import DataError, Positions, load_file

SETTINGS = {"seed": 1, "nodes": 10, "random_plies": 0, "max_plies": 40, "adjudicate_score": 2500,
            "adjudicate_ply": 20, "openings": "book.epd", "openings_sha256": "0" * 16, "engine": "e", "options": {}}
STARTS = [
    chess.STARTING_FEN,
    "r3k2r/pppq1ppp/2npbn2/4p3/2PpP3/2NP1N2/PP1BQPPP/R3K2R b KQkq c3 0 9",  # castling both ways, en passant
    "r3k3/1P4P1/8/8/8/8/1p4p1/R3K3 w Qq - 0 1",  # promotions, captures by promotion
    "4k3/2p1p1p1/8/1P1P1P1P/8/8/8/4K3 b - - 0 30",  # double steps beside enemy pawns
]
# White's d2d4 passes a black pawn on e4 that cannot take en passant: its king would stand in the
# rook's line. python-chess's FEN then has no en passant square; with the rook gone it has d3.
PINNED = "8/8/8/8/R3p2k/8/3P4/4K3 w - - 0 1"


def random_game(rng: random.Random, start: str, result: str, plies: int) -> list[str]:
    """A game of random legal moves from start, as `FEN;SCORE;BEST;RESULT` lines (SCORE at random)."""
    board = chess.Board(start)
    lines = []
    for _ in range(plies):
        moves = sorted(board.legal_moves, key=chess.Move.uci)
        if not moves:
            break
        move = rng.choice(moves)
        lines.append(f"{board.fen()};{rng.randint(-20000, 20000) if rng.random() < 0.1 else rng.randint(-300, 300)};"
                     f"{move.uci()};{result}")
        board.push(move)
    return lines


def random_games(count: int, seed: int) -> list[list[str]]:
    """`count` random games from STARTS, each with a result."""
    rng = random.Random(seed)
    return [random_game(rng, STARTS[number % len(STARTS)], rng.choice(["1", "0.5", "0"]), rng.randint(1, 90))
            for number in range(count)]


def text_of(games: list[list[str]]) -> str:
    """The games as a text file's content."""
    return "".join(line + "\n" for game in games for line in game)


def games_text(text: str) -> list[str]:
    """The text of each game (record) of a text."""
    return list(pack.games(b"".join(pack.records(text))))


def round_trip(text: str) -> tuple[str, int]:
    """The text that packing and unpacking `text` gives, and the records it packed into."""
    records = list(pack.records(text))
    return pack.unpack(pack.pack(records, block_bytes=256)), len(records)


# --------------------------------------------------------------------------- the codec and the positions
def test_the_move_codec_is_the_engines() -> None:
    """Every move the engine encodes has the same 16-bit code here, and the code gives its UCI back."""
    for code, move in MOVES_BY_CODE.items():
        assert move_code(move.uci()) == code and move_uci(code) == move.uci()


@pytest.mark.parametrize("bad", ["", "e2", "e2e2", "e2e9", "i2e4", "e7e8k", "e7e8Q", "0000", "P@e4", "e2e4qq"])
def test_a_move_the_codec_cannot_hold_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a move"):
        move_code(bad)


def test_positions_after_moves_are_python_chess_fens() -> None:
    """Position.push and fen() write what python-chess's push and fen() do, over random games with
    castling, en passant and promotions, and the pinned pawn that may not take en passant."""
    for game in random_games(80, seed=3):
        position = Position.from_fen(game[0].split(";")[0])
        assert position is not None
        for line, after in zip(game, game[1:]):
            position.push(move_code(line.split(";")[2]))
            assert position.fen() == after.split(";")[0]
    for fen, en_passant in ((PINNED, "-"), (PINNED.replace("R3p", "4p"), "d3")):
        position, board = Position.from_fen(fen), chess.Board(fen)
        assert position is not None
        position.push(move_code("d2d4"))
        board.push_uci("d2d4")
        assert position.fen() == board.fen() and position.fen().split()[3] == en_passant


@pytest.mark.parametrize("fen", ["x", "8/8/8 w - - 0 1", "8/8/8/8/8/8/8/9 w - - 0 1", "8/8/8/8/8/8/8/8 x - - 0 1",
                                 "8/8/8/8/8/8/8/8 w KK - 0 1", "8/8/8/8/8/8/8/8 w - - a 1",
                                 "8/8/8/8/8/8/8/7X w - - 0 1"])
def test_a_fen_that_is_no_position_is_refused(fen: str) -> None:
    assert Position.from_fen(fen) is None


# --------------------------------------------------------------------------- records
def test_games_pack_one_record_each_and_unpack_to_the_same_text() -> None:
    games = random_games(40, seed=4)
    text = text_of(games)
    back, records = round_trip(text)
    assert back == text and records == len(games)
    assert len(pack.pack(list(pack.records(text)))) < len(text) / 10


def test_lines_that_are_not_one_game_start_new_records_and_still_come_back() -> None:
    """A game restarted from its own first position, a result changed mid-game, a line repeated, a
    position python-chess cannot read and a move that is not legal all unpack as they were."""
    game = random_games(1, seed=5)[0][:12]
    fen, score, best, result = game[5].split(";")
    other = "0" if result != "0" else "1"
    lines = (game + game  # the same game again: its first line is not the position after the last
             + game[:5] + [f"{fen};{score};{best};{other}"] + game[6:]  # RESULT changes: a new record
             + [game[3], game[3]]  # a position twice
             + ["not a fen;1;e2e4;1", "not a fen;-2;a7a8q;0.5"]
             + [f"{PINNED};0;d2d4;1", "8/8/8/8/R2Pp2k/8/8/4K3 b - d3 0 1;5;e4d3;1"]  # python-chess's FEN has "-"
             + [f"{chess.STARTING_FEN};0;e1e8;0", f"{chess.STARTING_FEN};0;h8h1;0"])  # illegal moves
    text = "".join(line + "\n" for line in lines)
    back, records = round_trip(text)
    assert back == text
    assert records == 2 + 3 + 2 + 2 + 2 + 2


def test_long_runs_are_cut_at_the_records_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pack, "MAX_PLIES", 7)
    text = text_of(random_games(6, seed=6))
    back, records = round_trip(text)
    assert back == text and records == sum(-(-len(game) // 7) for game in random_games(6, seed=6))


@pytest.mark.parametrize("line, reason", [
    ("a;b;c", "expected"), ("x;1;e2e4;1/2", "RESULT"), ("x;+5;e2e4;1", "SCORE"), ("x;05;e2e4;1", "SCORE"),
    ("x;32768;e2e4;1", "SCORE"), ("x;1.5;e2e4;1", "SCORE"), ("x;1;e2e4 ;1", "BEST"), ("x;1;e2e4;1\r", "RESULT"),
])
def test_a_line_that_would_not_come_back_the_same_is_refused_with_its_number(line: str, reason: str) -> None:
    good = f"{chess.STARTING_FEN};0;e2e4;1\n"
    with pytest.raises(PackError, match=f"t:2: {reason}"):
        list(pack.records(good + line + "\n", "t"))


def test_text_without_a_last_newline_is_refused() -> None:
    with pytest.raises(PackError, match="no newline"):
        list(pack.records(f"{chess.STARTING_FEN};0;e2e4;1", "t"))


def test_a_cut_corrupt_or_unknown_pack_is_refused() -> None:
    data = pack.pack(list(pack.records(text_of(random_games(3, seed=7)))))
    for broken, reason in ((data[:-5], "cut short"), (data[:len(PACK_HEADER) + 30], "cut short"),
                           (data.replace(b"pack 1\n", b"pack 9\n"), "version '9'"),
                           (b"garfish pack", "not a garfish pack"), (b"text", "not a garfish pack")):
        with pytest.raises(PackError, match=reason):
            pack.unpack(broken, "p")
    record = next(pack.records(f"{chess.STARTING_FEN};0;e2e4;1\n"))
    for raw in (record[:-1], b"\x01\x05\x00short", record + b"\x03"):
        with pytest.raises(PackError, match="cut short or corrupt"):
            pack.unpack(PACK_HEADER + gzip.compress(raw), "p")


def test_gunzip_reads_every_member_and_refuses_a_broken_stream(tmp_path: Path) -> None:
    """A stream of many gzip members (datagen writes one a game) reads as gzip.decompress reads it;
    one cut short, with bytes after it or with a corrupt member is refused, and the trainer says so."""
    parts = [f"member {number}\n".encode() * (number % 7 + 1) for number in range(3000)]
    stream = b"".join(gzip.compress(part, mtime=0) for part in parts)
    assert pack.gunzip(stream) == b"".join(parts) == gzip.decompress(stream)
    assert pack.gunzip(b"") == b""
    corrupt = bytearray(stream)
    corrupt[-8] ^= 0xFF  # the last member's CRC-32
    for broken in (stream[:-3], stream + b"junk", bytes(corrupt)):
        with pytest.raises((OSError, EOFError, zlib.error)):
            pack.gunzip(broken)
    (tmp_path / "d.txt.gz").write_bytes(bytes(corrupt))
    with pytest.raises(DataError, match="cannot decode"):
        load_file(tmp_path / "d.txt.gz", None)


# --------------------------------------------------------------------------- garfish datagen
@pytest.mark.parametrize("torn_after", [None, 0, 2])
def test_datagen_writes_packs_that_unpack_to_its_text_files_byte_for_byte(tmp_path: Path,
                                                                          torn_after: Optional[int]) -> None:
    """The same games written as .txt.gz and as .gfpk: the pack unpacks to the gzip file's very
    bytes (a gzip member a game), also after a torn write (of the first game, with the pack's
    header, or of the third) was cut back by a rerun."""
    games = random_games(5, seed=8)
    paths = [tmp_path / "out.txt.gz", tmp_path / "out.gfpk"]
    for path in paths:
        output = Output(path, SETTINGS, print)
        for number, game in enumerate(games):
            if number == torn_after:
                output.close()
                with open(path, "ab") as handle:
                    handle.write(PACK_HEADER[:9])
                warnings: list[str] = []
                output = Output(path, SETTINGS, warnings.append)
                assert len(warnings) == 1 and "cut 9 bytes" in warnings[0]
            text = "".join(line + "\n" for line in game)
            output.append(FinishedGame(number + 1, text, len(game), game[0].split(";")[3], "test"))
        output.close()
    text_gz, packed = (path.read_bytes() for path in paths)
    assert packed.startswith(PACK_HEADER) and len(packed) < len(text_gz)
    assert pack.text_file(list(pack.unpacked_games(packed)), gzipped=True) == text_gz
    assert pack.unpack(packed) == gzip.decompress(text_gz).decode()


def test_a_datagen_run_writes_the_pack_of_the_text_file_it_would_write(tmp_path: Path) -> None:
    """The same command with OUT .txt.gz and .gfpk (a scripted engine): the pack unpacks to that gzip
    file, which `garfish pack` and `--unpack` give back byte for byte."""
    book = tmp_path / "book.epd"
    book.write_text(chess.STARTING_FEN + "\n")
    engine = shlex.join([sys.executable, str(SCRIPTED), "--play", "random", "--score", "12"])
    outs = [tmp_path / "run.txt.gz", tmp_path / "run.gfpk"]
    for out in outs:
        proc = subprocess.run([sys.executable, "-m", "garfish.uci", "datagen", str(out), "--engine", engine,
                               "--openings", str(book), "--games", "3", "--seed", "2", "--max-plies", "30",
                               "--no-progress"], cwd=str(ROOT), capture_output=True, text=True, timeout=CLI_TIMEOUT)
        assert proc.returncode == 0, proc.stderr
    text_gz, packed = (out.read_bytes() for out in outs)
    assert pack.text_file(list(pack.unpacked_games(packed)), gzipped=True) == text_gz
    repacked, back = tmp_path / "repacked.gfpk", tmp_path / "back.txt.gz"  # the text file, packed and unpacked
    assert run_pack(str(outs[0]), str(repacked)).returncode == 0
    assert run_pack("--unpack", str(repacked), str(back)).returncode == 0 and back.read_bytes() == text_gz


def run_pack(*args: str) -> subprocess.CompletedProcess:
    """Run `python -m garfish.uci pack ...` and capture its output."""
    return subprocess.run([sys.executable, "-m", "garfish.uci", "pack", *args], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=CLI_TIMEOUT)


def test_the_command_packs_and_unpacks_and_refuses_to_overwrite(tmp_path: Path) -> None:
    text = text_of(random_games(12, seed=9))
    source = tmp_path / "games.txt"
    source.write_text(text)
    packed, back, again = tmp_path / "games.gfpk", tmp_path / "back.txt.gz", tmp_path / "again.gfpk"
    proc = run_pack(str(source), str(packed))
    assert proc.returncode == 0, proc.stderr
    assert f"{text.count(chr(10)):,} positions in 12 games" in proc.stdout and "sha256" in proc.stdout
    assert run_pack("--unpack", str(packed), str(back)).returncode == 0
    assert gzip.decompress(back.read_bytes()).decode() == text
    assert run_pack(str(back), str(again)).returncode == 0 and again.read_bytes() == packed.read_bytes()
    repacked = tmp_path / "repacked.gfpk"  # a pack in, as datagen's (a block a game): a pack of large blocks out
    (tmp_path / "blocks.gfpk").write_bytes(PACK_HEADER + b"".join(pack.block(game) for game in games_text(text)))
    assert run_pack(str(tmp_path / "blocks.gfpk"), str(repacked)).returncode == 0
    assert repacked.read_bytes() == packed.read_bytes()
    for args, message in (((str(source), str(packed)), "exists"), ((str(source), str(tmp_path / "x.txt")), "OUT"),
                          (("--unpack", str(packed), str(tmp_path / "x.gfpk")), "OUT"),
                          (("--unpack", str(source), str(tmp_path / "x.txt")), "not a garfish pack")):
        proc = run_pack(*args)
        assert proc.returncode == 2 and message in proc.stderr


def test_shared_data_round_trips() -> None:
    """The first 3,000 lines of a shared file pack into its games and unpack to the same text."""
    folder = data_dir()
    path = folder / "train" / "sf15-5knodes-seed5.txt.gz" if folder else None
    if path is None or not path.is_file():
        data_missing("no shared training data (../shared/data/train/sf15-5knodes-seed5.txt.gz)")
        return
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        text = "".join(handle.readline() for _ in range(3000))
    back, records = round_trip(text)
    assert back == text and 15 <= records <= 40


# --------------------------------------------------------------------------- garfish train
def test_the_trainer_reads_a_pack_as_its_text(tmp_path: Path) -> None:
    """The same positions, games and labels from the pack as from its text, cached under the pack's hash."""
    text = text_of(random_games(30, seed=10))
    source, packed = tmp_path / "d.txt.gz", tmp_path / "d.gfpk"
    source.write_bytes(gzip.compress(text.encode()))
    packed.write_bytes(pack.pack(list(pack.records(text))))
    _, from_text, _ = load_file(source, None)
    identity, from_pack, cached = load_file(packed, tmp_path / "cache")
    assert not cached and load_file(packed, tmp_path / "cache")[2]
    assert identity.size == packed.stat().st_size
    for field in fields(Positions):
        assert np.array_equal(getattr(from_text, field.name), getattr(from_pack, field.name)), field.name
    packed.write_bytes(packed.read_bytes()[:-4])
    with pytest.raises(DataError, match="cut short"):
        load_file(packed, None)


def test_a_packs_positions_read_from_its_records_are_those_of_its_text() -> None:
    """train.data.pack_positions (records walked and played in Numba) gives parse_lines' positions of
    the pack's text, field for field: castling, en passant (a pinned pawn's too), promotions, games
    across records (a game whose RESULT changes midway is two records and one game), blocks of any
    size; where it cannot be sure it answers None and the text path decides."""
    from garfish.train.data import pack_positions, parse_lines
    games = random_games(200, seed=12) + [random_game(random.Random(13), PINNED, "1", 20)]
    split = random_game(random.Random(14), STARTS[1], "1", 40)
    games.append(split[:15] + [line[:line.rindex(";")] + ";0" for line in split[15:]])
    text = text_of(games)
    for block_bytes in (pack.BLOCK_BYTES, 300):
        data = pack.pack(list(pack.records(text)), block_bytes)
        fast = pack_positions(data)
        assert fast is not None
        slow = parse_lines(pack.unpack(data).splitlines())
        for field in fields(Positions):
            ours, theirs = getattr(fast, field.name), getattr(slow, field.name)
            assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), field.name
    assert fast.games == len(games) and fast.noisy.any() and fast.in_check.any()
    record = next(pack.records(f"{chess.STARTING_FEN};0;e2e4;1\n"))
    knight_to_pawn = record[:-3] + (12 | 28 << 6 | 1 << 12).to_bytes(2, "little") + record[-1:]  # e2e4, type 1
    for data in (PACK_HEADER + gzip.compress(knight_to_pawn), PACK_HEADER + gzip.compress(record[:-1]),
                 PACK_HEADER + b"\x1f\x8b broken", PACK_HEADER):
        assert pack_positions(data) is None


def test_the_trainer_refuses_a_folder_with_a_file_and_its_pack(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = text_of(random_games(2, seed=11))
    (tmp_path / "d.txt.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "d.gfpk").write_bytes(pack.pack(list(pack.records(text))))
    assert train_main([str(tmp_path)]) == 2
    assert "the same data in two forms" in capsys.readouterr().err
