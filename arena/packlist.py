"""`garfish pack --verify FOLDER`: a folder of packs checked against the data set's list of packs.

The list, packs.tsv beside this module (installed with it; --list FILE names another), holds a line a
pack of the training data set: its name, the seed, nodes and games of the command that makes it, and
what that command makes: positions, size and SHA-256 (the file's head describes the columns).
docs/data.md shows it as a table, with the one command that makes any of the packs:

    ./garfish datagen FILE --engine /usr/games/stockfish --option Hash=16 --nodes NODES --games GAMES --seed SEED -j 1

Each *.gfpk file of FOLDER is read (its games and positions counted from its records, without
their text) and judged against its line:

    ok        its games, positions, size and SHA-256 are the list's (where the list keeps only the
              first digits of the SHA-256, those)
    partial   fewer games than listed, all whole: a pack still being made, or stopped (an unfinished
              write at its end, as a run in progress leaves one, is allowed); its command goes on
    differs   as many games as listed or more, but other positions, size or SHA-256
    corrupt   not a pack that can be read (a corrupt block or record)
    extra     not in the list (said when its bytes are those of a listed pack under another name)
    missing   listed, and not in FOLDER

Other files (sidecars, text) are not looked at. Exit status: 0 when every listed pack is there and
ok and none is extra; 1 when one differs or is corrupt; 3 when none does, but some are missing,
partial or extra; 2 for a usage error (no such folder, a list that cannot be read).
"""

from __future__ import annotations

import functools
import hashlib
import re
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from garfish.arena.pack import PACK_SUFFIX, RESULTS, PackError, build_parser, pack_body
from garfish.arena.pack import main as pack_main
from garfish.arena.tools import EXIT_OK, EXIT_USAGE

PROG = "garfish pack"
LIST_NAME = "packs.tsv"
COLUMNS = ("file", "seed", "nodes", "games", "positions", "bytes", "sha256", "status", "note")
STATUSES = ("verified", "recorded")  # a copy of the very bytes was checked / as written down when made
UNKNOWN = "-"  # a size the record did not keep
SHA_DIGITS = 64
SHA_SHOWN = 16  # digits of a SHA-256 shown, and the fewest a line may keep
COMMAND = ("./garfish datagen {file} --engine /usr/games/stockfish --option Hash=16 --nodes {nodes} "
           "--games {games} --seed {seed} -j 1")
EXIT_DIFFERS = 1  # a pack differs from its line or is corrupt
EXIT_INCOMPLETE = 3  # none does, but a listed pack is missing or partial, or a pack is not listed
VERDICTS = ("ok", "partial", "differs", "corrupt", "extra", "missing")
FIRST_CHUNK = 4096  # bytes of a block given to zlib at first (doubled while it is not whole): a game is ~500
NUMBER = re.compile("[0-9]+")
HEX = re.compile("[0-9a-f]+")


@dataclass(frozen=True)
class Listed:
    """A line of the list: a pack of the data set and what its command makes."""

    file: str
    seed: int
    nodes: int
    games: int
    positions: int
    size: Optional[int]  # bytes; None where the record kept none
    sha256: str  # all 64 hex digits, or the first ones where the record kept no more
    status: str
    note: str

    def command(self) -> str:
        """The command that makes this pack (and goes on with a partial one)."""
        return COMMAND.format(file=self.file, nodes=self.nodes, games=self.games, seed=self.seed)


@dataclass(frozen=True)
class PackFacts:
    """What a pack file holds, counted from its records."""

    size: int
    sha256: str
    games: int  # whole records: a datagen game is one
    positions: int
    torn: int  # bytes of an unfinished block at its end (a write in progress, or a cut copy); 0 when none


@dataclass(frozen=True)
class Finding:
    """What the check says of one file, or of one listed pack."""

    file: str
    verdict: str  # one of VERDICTS
    detail: str


# --------------------------------------------------------------------------- the list
def default_list() -> Path:
    """The list installed with garfish: packs.tsv beside this module."""
    return Path(__file__).with_name(LIST_NAME)


def parse_line(fields: list[str]) -> Listed:
    """The pack of a list line's fields (ValueError naming the field that is wrong)."""
    if len(fields) != len(COLUMNS):
        raise ValueError(f"{len(fields)} tab-separated fields, not {len(COLUMNS)}")
    file, seed, nodes, games, positions, size, sha256, status, note = fields
    if not file.endswith(PACK_SUFFIX) or "/" in file or "\\" in file:
        raise ValueError(f"file {file!r} is not the name of a pack (*{PACK_SUFFIX})")
    for column, text in (("seed", seed), ("nodes", nodes), ("games", games), ("positions", positions)):
        if not NUMBER.fullmatch(text):
            raise ValueError(f"{column} {text!r} is not a number")
    if size != UNKNOWN and not NUMBER.fullmatch(size):
        raise ValueError(f"bytes {size!r} is neither a number nor {UNKNOWN}")
    if not (SHA_SHOWN <= len(sha256) <= SHA_DIGITS and HEX.fullmatch(sha256)):
        raise ValueError(f"sha256 {sha256!r} is not {SHA_SHOWN} to {SHA_DIGITS} lowercase hex digits")
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    return Listed(file, int(seed), int(nodes), int(games), int(positions), None if size == UNKNOWN else int(size),
                  sha256, status, note)


def read_list(path: Path) -> list[Listed]:
    """The packs of a list file: comment lines (#) and blank ones, the header line, a line a pack (ValueError
    naming the line that is none, or a pack listed twice)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the list '{path}': {getattr(exc, 'strerror', None) or exc}") from None
    packs: list[Listed] = []
    header = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header:
            if tuple(fields) != COLUMNS:
                raise ValueError(f"{path}:{number}: the header line should be the columns {', '.join(COLUMNS)}, "
                                 f"tab-separated")
            header = True
            continue
        try:
            packs.append(parse_line(fields))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        if any(other.file == packs[-1].file for other in packs[:-1]):
            raise ValueError(f"{path}:{number}: {packs[-1].file} is listed twice")
    if not header:
        raise ValueError(f"{path}: no header line ({', '.join(COLUMNS)})")
    return packs


# --------------------------------------------------------------------------- a pack's facts
@functools.lru_cache(maxsize=1024)
def varints(count: int) -> re.Pattern[bytes]:
    """A pattern of `count` LEB128 varints (bytes with the high bit set, then one without)."""
    return re.compile(rb"(?:[\x80-\xff]*[\x00-\x7f]){%d}" % count)


def tally(raw: bytes, name: str) -> tuple[int, int]:
    """The records and lines of a pack's decompressed records, walked without their text (PackError when they
    are cut short or corrupt)."""
    at, records, lines = 0, 0, 0
    try:
        while at < len(raw):
            result, length = struct.unpack_from("<BH", raw, at)
            at += 3 + length
            (plies,) = struct.unpack_from("<H", raw, at)
            at += 2 + 2 * plies
            scores = varints(plies).match(raw, at) if plies and result < len(RESULTS) else None
            if scores is None:
                raise PackError(f"{name}: its records are cut short or corrupt (record {records + 1})")
            at = scores.end()
            records, lines = records + 1, lines + plies
    except struct.error:
        raise PackError(f"{name}: its records are cut short (record {records + 1})") from None
    return records, lines


def whole_block(body: memoryview, at: int, name: str) -> Optional[tuple[bytes, int]]:
    """The records of the block (gzip member) that starts at `at` and the offset after it, or None when it is
    unfinished (PackError when it is corrupt). The block is fed to zlib a piece at a time, so that what zlib
    leaves over after it stays small: a datagen pack is tens of thousands of blocks."""
    decompressor = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    end, chunk = at, FIRST_CHUNK
    try:
        while not decompressor.eof:
            if end >= len(body):
                return None
            piece = body[end:end + chunk]
            parts.append(decompressor.decompress(piece))
            end, chunk = end + len(piece), chunk * 2
    except zlib.error as exc:
        raise PackError(f"{name}: a corrupt block at byte {at:,} of its blocks ({exc})") from None
    return b"".join(parts), end - len(decompressor.unused_data)


def pack_facts(data: bytes, name: str) -> PackFacts:
    """What a pack file's bytes hold (PackError when they are no pack, or a block or record is corrupt)."""
    body = memoryview(pack_body(data, name))
    blocks: list[bytes] = []
    at, torn = 0, 0
    while at < len(body):
        block = whole_block(body, at, name)
        if block is None:
            torn = len(body) - at
            break
        raw, at = block
        blocks.append(raw)
    games, positions = tally(b"".join(blocks), name)
    return PackFacts(len(data), hashlib.sha256(data).hexdigest(), games, positions, torn)


# --------------------------------------------------------------------------- the check
def judge(listed: Listed, facts: PackFacts) -> tuple[str, str]:
    """The verdict on a listed pack's file, and why."""
    if facts.games < listed.games:
        torn = f", then an unfinished write of {facts.torn:,} bytes" if facts.torn else ""
        return "partial", (f"{facts.games:,} of {listed.games:,} games ({facts.positions:,} positions){torn}; "
                           f"its command goes on: {listed.command()}")
    differences = [f"an unfinished write of {facts.torn:,} bytes at its end"] if facts.torn else []
    for what, found, wanted in (("games", facts.games, listed.games), ("positions", facts.positions, listed.positions),
                                ("bytes", facts.size, listed.size)):
        if wanted is not None and found != wanted:
            differences.append(f"{found:,} {what} (listed {wanted:,})")
    if not facts.sha256.startswith(listed.sha256):
        differences.append(f"SHA-256 {facts.sha256[:SHA_SHOWN]}... (listed {listed.sha256[:SHA_SHOWN]}...)")
    if differences:
        return "differs", "; ".join(differences)
    sha = "SHA-256" if len(listed.sha256) == SHA_DIGITS else f"the {len(listed.sha256)} digits of SHA-256 it keeps"
    return "ok", f"{facts.games:,} games, {facts.positions:,} positions, {facts.size:,} bytes; {sha} as listed"


def check_file(path: Path, listed: Optional[Listed], packs: list[Listed]) -> Finding:
    """What the check says of one pack file of the folder."""
    try:
        facts = pack_facts(path.read_bytes(), path.name)
    except OSError as exc:
        return Finding(path.name, "corrupt" if listed else "extra", f"cannot read it: {exc.strerror or exc}")
    except PackError as exc:
        return Finding(path.name, "corrupt" if listed else "extra", str(exc))
    if listed is not None:
        return Finding(path.name, *judge(listed, facts))
    twin = next((other.file for other in packs if facts.sha256.startswith(other.sha256)), None)
    return Finding(path.name, "extra", f"not in the list ({facts.games:,} games, {facts.positions:,} positions, "
                                       f"SHA-256 {facts.sha256[:SHA_SHOWN]}...)"
                                       + (f"; its bytes are those of {twin}" if twin else ""))


def verify(folder: Path, packs: list[Listed]) -> list[Finding]:
    """The findings on each pack file of the folder, then on each listed pack that is missing (OSError when the
    folder cannot be read)."""
    by_name = {listed.file: listed for listed in packs}
    files = sorted(path for path in folder.iterdir() if path.name.endswith(PACK_SUFFIX) and path.is_file())
    findings = [check_file(path, by_name.get(path.name), packs) for path in files]
    present = {path.name for path in files}
    findings += [Finding(listed.file, "missing", listed.command()) for listed in packs if listed.file not in present]
    return findings


def exit_status(findings: list[Finding]) -> int:
    """The check's exit status (see the module's docstring)."""
    verdicts = {finding.verdict for finding in findings}
    if verdicts & {"differs", "corrupt"}:
        return EXIT_DIFFERS
    if verdicts & {"partial", "missing", "extra"}:
        return EXIT_INCOMPLETE
    return EXIT_OK


def runs(numbers: list[int]) -> str:
    """Numbers as runs of consecutive ones: 21, 33-69, 73-104."""
    parts: list[str] = []
    for number in sorted(numbers):
        if parts and parts[-1].split("-")[-1] == str(number - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{number}"
        else:
            parts.append(str(number))
    return ", ".join(parts)


def missing_line(missing: list[Listed], listed: int) -> str:
    """The missing packs in one line, by their seeds at each node count."""
    by_nodes: dict[int, list[int]] = {}
    for pack in missing:
        by_nodes.setdefault(pack.nodes, []).append(pack.seed)
    groups = "; ".join(f"{nodes:,} nodes: seed{'s' if len(seeds) > 1 else ''} {runs(seeds)}"
                       for nodes, seeds in sorted(by_nodes.items(), reverse=True))
    return f"missing: {len(missing)} of {listed} listed packs ({groups})"


def verify_main(folder: Path, list_path: Optional[Path], out: Callable[[str], None] = print) -> int:
    """`garfish pack --verify FOLDER [--list FILE]`: print the findings; the exit status."""
    list_path = list_path or default_list()
    try:
        packs = read_list(list_path)
        if not folder.is_dir():
            raise ValueError(f"no folder '{folder}'")
        findings = verify(folder, packs)
    except OSError as exc:
        print(f"{PROG}: cannot read '{folder}': {exc.strerror or exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    out(f"{PROG}: {folder} against {list_path} ({len(packs)} packs listed)")
    for finding in findings:
        if finding.verdict != "missing":
            out(f"{finding.file}: {finding.verdict}: {finding.detail}")
    by_name = {pack.file: pack for pack in packs}
    missing = [by_name[finding.file] for finding in findings if finding.verdict == "missing"]
    if missing:
        out(missing_line(missing, len(packs)))
    counts = ", ".join(f"{sum(finding.verdict == verdict for finding in findings)} {verdict}" for verdict in VERDICTS)
    status = exit_status(findings)
    meaning = {EXIT_OK: "all as listed", EXIT_DIFFERS: "NOT as listed", EXIT_INCOMPLETE: "incomplete"}[status]
    out(f"{PROG}: {counts}: {meaning} (exit status {status})")
    return status


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish pack`: --verify FOLDER here (verify_main), the rest garfish.arena.pack.main's."""
    args = build_parser().parse_args(argv)
    if args.verify is None:
        return pack_main(argv)
    if args.source is not None or args.unpack:
        print(f"{PROG}: --verify FOLDER takes no IN, OUT or --unpack", file=sys.stderr, flush=True)
        return EXIT_USAGE
    return verify_main(args.verify, args.packs)
