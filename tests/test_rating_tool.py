"""`garfish rating`: a rating on an opponent's scale from `garfish match` reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from garfish.arena.rating import main as rating_main


def write_report(path: Path, pentanomial: list[int], opponent: str) -> str:
    wins = 2 * pentanomial[4] + pentanomial[3]  # a simple consistent W/D/L for the header line
    path.write_text(json.dumps({"engines": ["Garfish", opponent], "pentanomial": pentanomial, "wins": wins,
                                "draws": pentanomial[2] * 2, "losses": 2 * pentanomial[0] + pentanomial[1],
                                "score": 0.5}))
    return str(path)


def test_rating_command_combines_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    low = write_report(tmp_path / "low.json", [1, 3, 10, 14, 12], "SF1500")
    high = write_report(tmp_path / "high.json", [12, 14, 10, 3, 1], "SF1900")
    assert rating_main([f"1500={low}", f"1900={high}"]) == 0
    out = capsys.readouterr().out
    assert "Garfish vs SF1500 (1500)" in out and "-> rating 1652 [1590, 1725]" in out
    assert "Garfish vs SF1900 (1900)" in out and "-> rating 1748 [1675, 1810]" in out
    assert "Combined rating: 1700" in out and "from 160 games" in out


@pytest.mark.parametrize("argument", ["1500", "abc=x.json", "1500=", "1500=/nonexistent/report.json"])
def test_rating_command_rejects_bad_arguments(argument: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert rating_main([argument]) == 2
    assert "garfish rating:" in capsys.readouterr().err


def test_rating_command_rejects_a_file_that_is_not_a_report(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.json").write_text("[1, 2")
    (tmp_path / "empty.json").write_text(json.dumps({"pentanomial": [0, 0, 0, 0, 0]}))
    assert rating_main([f"1500={tmp_path / 'bad.json'}"]) == 2
    assert rating_main([f"1500={tmp_path / 'empty.json'}"]) == 2
    err = capsys.readouterr().err
    assert "is not JSON" in err and "no finished game pairs" in err


def write_pgn(path: Path, results: list[tuple[str, str, str]]) -> Path:
    """A PGN of games with only their players and results."""
    text = "".join(f'[Event "t"]\n[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n{result}\n\n'
                   for white, black, result in results)
    path.write_text(text)
    return path


def test_rating_from_pgn_games_holds_the_anchors_and_rates_the_rest(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """--pgn with --anchor: an engine that scores 75% against an anchor at 2000 (and 50% against another at
    2200, in a second file) is rated between them with an interval; unfinished games are left out; the
    anchors' lines say they are held."""
    first = write_pgn(tmp_path / "a.pgn", [("E", "A", "1-0"), ("A", "E", "1/2-1/2"), ("E", "A", "1-0"),
                                           ("A", "E", "1/2-1/2"), ("E", "A", "*")] * 10)
    second = write_pgn(tmp_path / "b.pgn", [("E", "B", "1-0"), ("B", "E", "1-0"), ("E", "B", "1/2-1/2"),
                                            ("B", "E", "1/2-1/2")] * 10)
    assert rating_main(["--pgn", str(first), "--pgn", str(second), "--anchor", "A=2000", "--anchor", "B=2200"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("80 games, 3 players, 2 anchors")
    line = next(line for line in out.splitlines() if line.startswith("E "))
    rating = float(line.split()[3])
    assert 2100 < rating < 2250
    assert "[" in line and "..." not in line.split("  ")[3]
    assert "2000 (anchor)" in out and "2200 (anchor)" in out


def test_rating_from_pgn_needs_an_anchor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Games whose players have no published rating: a clear error, exit status 2; so is a bad --anchor."""
    games = write_pgn(tmp_path / "a.pgn", [("E", "A", "1-0")])
    assert rating_main(["--pgn", str(games)]) == 2
    assert "no player of these games has a published rating" in capsys.readouterr().err
    assert rating_main(["--pgn", str(games), "--anchor", "A2000"]) == 2
    assert "--anchor takes NAME=RATING" in capsys.readouterr().err
    assert rating_main(["--pgn", str(tmp_path / "missing.pgn"), "--anchor", "A=2000"]) == 2
    assert "cannot read" in capsys.readouterr().err
