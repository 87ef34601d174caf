"""`garfish pack IN OUT`: labelled self-play positions kept as games, a few bytes a position (.gfpk).

The text format (../shared/data/train/README.md, `garfish datagen`) writes one position a line,
`FEN;SCORE;BEST;RESULT`, about 14 bytes a position when gzip-compressed. A pack keeps the same lines
as games, in the spirit of Stockfish's binpack: a game's first FEN and its result once, then for each
ply the move played (BEST) and the search's score; every later FEN is made by playing the moves.
Unpacking gives back the text, byte for byte.

A pack file (.gfpk):

    PACK_HEADER   b"garfish pack 1\\n": the format's name and version, one text line
    blocks        gzip members, each holding whole records (gzip readers see one stream)

A record is a run of consecutive lines (little-endian):

    u8           RESULT in half points for White: 0 "0", 1 "0.5", 2 "1"
    u16, bytes   the first line's FEN (its length, then its bytes as in the text)
    u16          n, the lines of the record (1 to 65535)
    u16 x n      each line's BEST as a move code: from | to << 6 | promotion << 12, squares
                 a1 = 0 ... h8 = 63, promotion n 2, b 3, r 4, q 5 (0: none), as engine/board/moves.py
    varint x n   each line's SCORE (-32768 to 32767, White's view; datagen writes mates as
                 +-(32000 - moves to mate), clipped to +-20000): the zigzag LEB128 varint of its
                 difference from the line before's (the first line's from 0)

Line k + 1 of a record has the FEN of line k's position after its BEST, as `Position` makes it: the
piece moved (the rook too when a king moves two files, the pawn taken en passant removed when a pawn
moves aside onto an empty square, a promotion in the colour of the side to move), the other side to move,
castling letters dropped for a king or rook square moved from or to, the en passant square only when
the side to move has a legal en passant capture, the halfmove clock reset by a pawn move or a
capture, the move number raised after Black's move: python-chess's `Board.fen()` after `push`. So a
line starts a new record exactly when its FEN is not the previous line's position after BEST (the
README's rule for a new game), when its RESULT differs from the record's, or after 65535 lines: any
sequence of lines packs, games or not, and a datagen game is one record.

`garfish datagen` writes one block a game (it appends whole games, and a rerun cuts the file back
after the last one); `garfish pack` writes blocks of about BLOCK_BYTES, which compress better.

`garfish pack --verify FOLDER` checks a folder of packs against the list of the training data set's
packs (garfish.arena.packlist).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Iterator, Optional, Sequence

import chess

from garfish.arena.tools import EXIT_OK, EXIT_USAGE

PROG = "garfish pack"
PACK_SUFFIX = ".gfpk"
PACK_NAME = b"garfish pack "
PACK_VERSION = 1
PACK_HEADER = PACK_NAME + f"{PACK_VERSION}\n".encode("ascii")
GZIP_MAGIC = b"\x1f\x8b"
BLOCK_BYTES = 1 << 20  # records gathered into one gzip member by `garfish pack`
MAX_PLIES = 0xFFFF  # lines a record holds at most (its count is a u16)
MAX_FEN_BYTES = 0xFFFF
SCORE_MIN, SCORE_MAX = -(1 << 15), (1 << 15) - 1  # a 16-bit signed score
RESULTS = ("0", "0.5", "1")  # by code: White's result in half points
RESULT_CODES = {text: code for code, text in enumerate(RESULTS)}

# The move codec (engine/board/moves.py's, which arena may not import): a move as 16 bits.
TO_SHIFT = 6
PROMOTION_SHIFT = 12
SQUARE_MASK = 63
PROMOTION_LETTERS = "  nbrq"  # by python-chess piece type: knight 2 ... queen 5
PROMOTION_TYPES = {letter: piece for piece, letter in enumerate(PROMOTION_LETTERS) if letter != " "}
FILES, RANKS = "abcdefgh", "12345678"

# The board: 64 characters, a1 first, "." for an empty square.
EMPTY = "."
PIECES = "PNBRQKpnbrqk"
PROMOTED = {True: " PNBRQK", False: " pnbrqk"}  # a promotion's piece by the mover's colour and type
CASTLING_LOST = {chess.A1: "Q", chess.E1: "KQ", chess.H1: "K", chess.A8: "q", chess.E8: "kq", chess.H8: "k"}
RUNS = tuple(("." * n, str(n)) for n in range(8, 0, -1))  # empty squares as FEN digits, longest first


class PackError(ValueError):
    """Lines that cannot be packed exactly, or a pack that cannot be read: the file, the line and why."""


def move_code(uci: str) -> int:
    """The 16-bit code of a move in UCI notation, from | to << 6 | promotion << 12 (ValueError unless
    it is a move between two squares, with a promotion letter n, b, r or q)."""
    if len(uci) not in (4, 5) or uci[0] not in FILES or uci[2] not in FILES or uci[1] not in RANKS \
            or uci[3] not in RANKS or (len(uci) == 5 and uci[4] not in PROMOTION_TYPES):
        raise ValueError(f"{uci!r} is not a move in UCI notation")
    origin = FILES.index(uci[0]) + 8 * RANKS.index(uci[1])
    target = FILES.index(uci[2]) + 8 * RANKS.index(uci[3])
    if origin == target:
        raise ValueError(f"{uci!r} is not a move in UCI notation")
    promotion = PROMOTION_TYPES[uci[4]] if len(uci) == 5 else 0
    return origin | (target << TO_SHIFT) | (promotion << PROMOTION_SHIFT)


def move_uci(code: int) -> str:
    """The UCI notation of a 16-bit move code."""
    origin, target = code & SQUARE_MASK, (code >> TO_SHIFT) & SQUARE_MASK
    promotion = code >> PROMOTION_SHIFT
    return (chess.SQUARE_NAMES[origin] + chess.SQUARE_NAMES[target]
            + (PROMOTION_LETTERS[promotion] if promotion else ""))


class Position:
    """A position as the text's FEN has it, able to play a move code and write the FEN after it
    (the record's rule in the module's docstring; the same as python-chess's `push` and `fen()`)."""

    __slots__ = ("squares", "white", "castling", "en_passant", "halfmove", "fullmove")

    def __init__(self, squares: list[str], white: bool, castling: str, halfmove: int, fullmove: int) -> None:
        """A position from its parts (`from_fen` reads one)."""
        self.squares, self.white, self.castling = squares, white, castling
        self.en_passant = "-"
        self.halfmove, self.fullmove = halfmove, fullmove

    @classmethod
    def from_fen(cls, fen: str) -> Optional["Position"]:
        """The position of a FEN, or None when its fields are not a board, a side, castling letters
        and two counters (such a line can only end its record)."""
        fields = fen.split(" ")
        if len(fields) != 6 or fields[1] not in ("w", "b") or not fields[4].isdigit() or not fields[5].isdigit():
            return None
        castling = fields[2]
        if castling != "-" and (not castling or set(castling) - set("KQkq") or len(set(castling)) != len(castling)):
            return None
        rows = fields[0].split("/")
        if len(rows) != 8:
            return None
        squares: list[str] = []
        for row in reversed(rows):  # rank 1 first
            expanded = "".join(EMPTY * int(char) if char in "12345678" else char for char in row)
            if len(expanded) != 8 or expanded.strip(PIECES + EMPTY):
                return None
            squares.extend(expanded)
        return cls(squares, fields[1] == "w", castling, int(fields[4]), int(fields[5]))

    def push(self, code: int) -> None:
        """Play a move code (any: an illegal one moves what it moves, so the record's rule stays exact)."""
        board = self.squares
        origin, target = code & SQUARE_MASK, (code >> TO_SHIFT) & SQUARE_MASK
        promotion = code >> PROMOTION_SHIFT
        piece = board[origin]
        capture = board[target] != EMPTY
        pawn = piece in ("P", "p")
        if pawn and (origin ^ target) & 7 and not capture:  # en passant: the pawn beside it is taken
            board[(origin & ~7) | (target & 7)] = EMPTY
            capture = True
        if piece in ("K", "k") and abs((origin & 7) - (target & 7)) == 2:  # castling: the rook jumps over
            rank = origin & ~7
            rook_from, rook_to = (rank + 7, rank + 5) if target & 7 == 6 else (rank, rank + 3)
            board[rook_to], board[rook_from] = board[rook_from], EMPTY
        board[origin] = EMPTY
        board[target] = PROMOTED[self.white][promotion] if promotion else piece
        if self.castling != "-" and (origin in CASTLING_LOST or target in CASTLING_LOST):
            lost = CASTLING_LOST.get(origin, "") + CASTLING_LOST.get(target, "")
            self.castling = "".join(letter for letter in self.castling if letter not in lost) or "-"
        self.halfmove = 0 if pawn or capture else self.halfmove + 1
        self.fullmove += not self.white
        self.white = not self.white
        self.en_passant = "-"
        if pawn and abs(target - origin) == 16:
            self._set_en_passant((origin + target) // 2, target)

    def _set_en_passant(self, square: int, pawn: int) -> None:
        """After a double step: the square passed over, when the side to move can take en passant
        legally (python-chess decides, as its `fen()` does; an enemy pawn beside is rare enough)."""
        enemy = "P" if self.white else "p"
        beside = [pawn + step for step in (-1, 1) if 0 <= (pawn & 7) + step < 8]
        if any(self.squares[at] == enemy for at in beside):
            self.en_passant = chess.SQUARE_NAMES[square]
            try:
                legal = chess.Board(self.fen()).has_legal_en_passant()
            except ValueError:  # a position python-chess does not take: no en passant square
                legal = False
            if not legal:
                self.en_passant = "-"

    def fen(self) -> str:
        """The position's FEN."""
        board = self.squares
        placement = "/".join("".join(board[start:start + 8]) for start in range(56, -1, -8))
        for run, digit in RUNS:
            placement = placement.replace(run, digit)
        return (f"{placement} {'w' if self.white else 'b'} {self.castling} {self.en_passant} "
                f"{self.halfmove} {self.fullmove}")


# --------------------------------------------------------------------------- records
def _varints(scores: Sequence[int]) -> bytes:
    """The scores as zigzag LEB128 varints of their differences, the first from 0."""
    out = bytearray()
    previous = 0
    for score in scores:
        delta, previous = score - previous, score
        value = delta << 1 if delta >= 0 else ((-delta) << 1) - 1
        while value > 0x7F:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out)


def _record(result: str, fen: str, codes: Sequence[int], scores: Sequence[int]) -> bytes:
    """One record's bytes."""
    raw = fen.encode("utf-8")
    return (struct.pack("<BH", RESULT_CODES[result], len(raw)) + raw
            + struct.pack(f"<H{len(codes)}H", len(codes), *codes) + _varints(scores))


def _fields(line: str, number: int, name: str) -> tuple[str, int, int, str]:
    """A text line's FEN, SCORE, BEST's move code and RESULT (PackError when it would not come back
    the same)."""
    fields = line.split(";")
    if len(fields) != 4:
        raise PackError(f"{name}:{number}: expected 'FEN;SCORE;BEST;RESULT': {line[:100]!r}")
    fen, score, best, result = fields
    if result not in RESULT_CODES:
        raise PackError(f"{name}:{number}: RESULT {result!r} is not 1, 0.5 or 0")
    try:
        value = int(score)
    except ValueError:
        value = None
    if value is None or str(value) != score or not SCORE_MIN <= value <= SCORE_MAX:
        raise PackError(f"{name}:{number}: SCORE {score!r} is not an integer from {SCORE_MIN} to {SCORE_MAX}")
    try:
        code = move_code(best)
    except ValueError as exc:
        raise PackError(f"{name}:{number}: BEST: {exc}") from None
    if len(fen.encode("utf-8")) > MAX_FEN_BYTES:
        raise PackError(f"{name}:{number}: FEN longer than {MAX_FEN_BYTES} bytes")
    return fen, value, code, result


def records(text: str, name: str = "<text>") -> Iterator[bytes]:
    """The records of `FEN;SCORE;BEST;RESULT` lines, each ending in a newline (PackError names the
    first line that cannot be packed exactly)."""
    if text and not text.endswith("\n"):
        raise PackError(f"{name}: the last line has no newline")
    result, fen = "", ""  # the record being gathered: its RESULT, first FEN, moves and scores
    codes: list[int] = []
    scores: list[int] = []
    position: Optional[Position] = None
    expected: Optional[str] = None  # the FEN that continues the record
    for number, line in enumerate(text.split("\n")[:-1], 1):
        line_fen, score, code, line_result = _fields(line, number, name)
        if not (codes and line_fen == expected and line_result == result and len(codes) < MAX_PLIES):
            if codes:
                yield _record(result, fen, codes, scores)
            result, fen, codes, scores = line_result, line_fen, [], []
            position = Position.from_fen(line_fen)
        codes.append(code)
        scores.append(score)
        if position is not None:
            position.push(code)
            expected = position.fen()
    if codes:
        yield _record(result, fen, codes, scores)


def games(raw: bytes, name: str = "<pack>") -> Iterator[str]:
    """The text of each record of a pack's decompressed records (PackError when they are cut short
    or corrupt)."""
    at, size = 0, len(raw)
    try:
        while at < size:
            result_code, length = struct.unpack_from("<BH", raw, at)
            at += 3
            fen = raw[at:at + length].decode("utf-8")
            at += length
            (plies,) = struct.unpack_from("<H", raw, at)
            codes = struct.unpack_from(f"<{plies}H", raw, at + 2)
            at += 2 + 2 * plies
            result = RESULTS[result_code]
            position = Position.from_fen(fen) if plies > 1 else None
            if plies == 0 or (plies > 1 and position is None):
                raise PackError(f"{name}: a corrupt record at byte {at} of its records")
            lines, score = [], 0
            for ply, code in enumerate(codes):
                value, shift = 0, 0
                while True:
                    byte = raw[at]
                    at += 1
                    value |= (byte & 0x7F) << shift
                    if byte < 0x80:
                        break
                    shift += 7
                score += value >> 1 if not value & 1 else -((value + 1) >> 1)
                if ply:
                    assert position is not None
                    position.push(codes[ply - 1])
                    fen = position.fen()
                lines.append(f"{fen};{score};{move_uci(code)};{result}\n")
            yield "".join(lines)
    except (struct.error, IndexError, UnicodeDecodeError):
        raise PackError(f"{name}: its records are cut short or corrupt (at byte {at})") from None


# --------------------------------------------------------------------------- files
def gunzip(data: bytes) -> bytes:
    """The bytes of a gzip stream of any number of members (OSError, EOFError or zlib.error when it
    is cut short or corrupt). gzip.decompress copies the rest of its input at every member, which
    is quadratic in a datagen file's one member a game (52 s for the 37,000 of a 16 MB pack, against
    0.34 s read through GzipFile, which reads in chunks)."""
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        return stream.read()


def is_pack(data: bytes) -> bool:
    """Whether a file's bytes are a pack (by its header line's name, whatever the version)."""
    return data.startswith(PACK_NAME)


def block(text: str, name: str = "<text>") -> bytes:
    """One block: a gzip member of the records of whole lines (a datagen game)."""
    return gzip.compress(b"".join(records(text, name)), mtime=0)


def pack(records_: Sequence[bytes], block_bytes: int = BLOCK_BYTES) -> bytes:
    """A pack file's bytes: the header, then the records in blocks of about block_bytes each."""
    blocks, gathered, size = [PACK_HEADER], [], 0
    for record in records_:
        gathered.append(record)
        size += len(record)
        if size >= block_bytes:
            blocks.append(gzip.compress(b"".join(gathered), mtime=0))
            gathered, size = [], 0
    if gathered:
        blocks.append(gzip.compress(b"".join(gathered), mtime=0))
    return b"".join(blocks)


def pack_body(data: bytes, name: str = "<pack>") -> bytes:
    """The blocks of a pack file's bytes, after its header line (PackError when it is no pack of a known
    version)."""
    header, newline, _ = data[:64].partition(b"\n")
    if not is_pack(data) or not newline:
        raise PackError(f"{name}: not a garfish pack (no '{PACK_NAME.decode()}N' header line)")
    version = header[len(PACK_NAME):]
    if version != str(PACK_VERSION).encode("ascii"):
        raise PackError(f"{name}: pack version {version.decode('ascii', 'replace')!r}, this garfish reads "
                        f"version {PACK_VERSION}")
    return data[len(header) + 1:]


def unpacked_games(data: bytes, name: str = "<pack>") -> Iterator[str]:
    """The text of each record of a pack file's bytes (PackError when it is no pack of a known
    version, or is cut short)."""
    body = pack_body(data, name)
    try:
        raw = gunzip(body) if body else b""
    except (OSError, EOFError, zlib.error) as exc:
        raise PackError(f"{name}: its blocks are cut short or corrupt ({exc})") from None
    return games(raw, name)


def unpack(data: bytes, name: str = "<pack>") -> str:
    """The text of a pack file's bytes: its `FEN;SCORE;BEST;RESULT` lines."""
    return "".join(unpacked_games(data, name))


# --------------------------------------------------------------------------- command line
def read_text(data: bytes, name: str) -> str:
    """The text of a data file's bytes: unpacked, gunzipped or as it is (PackError when it cannot be)."""
    if is_pack(data):
        return unpack(data, name)
    try:
        return (gunzip(data) if data.startswith(GZIP_MAGIC) else data).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise PackError(f"{name}: cannot read it as text ({exc})") from None


def text_file(game_texts: Sequence[str], gzipped: bool) -> bytes:
    """A text file's bytes: gzip as garfish datagen writes it (a gzip member a game: a record), or plain."""
    if gzipped:
        return b"".join(gzip.compress(text.encode("utf-8"), mtime=0) for text in game_texts)
    return "".join(game_texts).encode("utf-8")


def write_new(path: Path, data: bytes) -> None:
    """Write a new file whole (through a temporary file beside it, so that no half file is left)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def build_parser() -> argparse.ArgumentParser:
    """Command-line arguments of `garfish pack`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, metavar="IN", nargs="?",
                        help="positions: text (FEN;SCORE;BEST;RESULT lines, gzip or plain) or a pack; "
                             "with --unpack a pack")
    parser.add_argument("out", type=Path, metavar="OUT", nargs="?",
                        help=f"the file to write (a new one): a pack, named *{PACK_SUFFIX}; with --unpack text, "
                             f"gzip when it ends in .gz")
    parser.add_argument("--unpack", action="store_true", help="write IN's positions as text")
    parser.add_argument("--verify", type=Path, metavar="FOLDER",
                        help="instead: check the packs of FOLDER against the data set's list (missing, partial, "
                             "differing, corrupt, extra; exit status 0 all as listed, 1 one differs or is corrupt, "
                             "3 incomplete; see garfish.arena.packlist)")
    parser.add_argument("--list", type=Path, metavar="FILE", dest="packs",
                        help="with --verify: the list to check against (default: packs.tsv, installed with garfish)")
    return parser


def convert(data: bytes, source: str, out: Path, unpacking: bool) -> tuple[bytes, int, int]:
    """OUT's bytes for IN's, and the positions and records (games) they hold (PackError when IN
    cannot be read or packed)."""
    if unpacking:
        game_texts = list(unpacked_games(data, source))
        positions = sum(text.count("\n") for text in game_texts)
        return text_file(game_texts, out.name.endswith(".gz")), positions, len(game_texts)
    text = read_text(data, source)
    packed_records = list(records(text, source))
    written = pack(packed_records)
    if unpack(written, str(out)) != text:  # a check of the record's rule, which makes this impossible
        raise PackError(f"{source}: the pack would not unpack to the same text: nothing written")
    return written, text.count("\n"), len(packed_records)


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish pack`."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def fail(message: str) -> int:
        """Print a problem; the usage error status."""
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)
        return EXIT_USAGE

    if args.verify is not None:  # garfish.arena.packlist.main's (`garfish pack`'s entry), which calls this without it
        return fail("--verify FOLDER is garfish.arena.packlist.main's")
    if args.out is None or args.packs is not None:
        parser.print_usage(sys.stderr)
        return fail("IN and OUT are needed (or --verify FOLDER, with --list FILE)")
    if args.unpack == args.out.name.endswith(PACK_SUFFIX):
        return fail(f"with --unpack OUT is text (*.txt or *.txt.gz), else a pack (*{PACK_SUFFIX})")
    if args.out.exists():
        return fail(f"'{args.out}' exists: choose a new file")
    try:
        data = args.source.read_bytes()
    except OSError as exc:
        return fail(f"cannot read '{args.source}': {exc.strerror or exc}")
    try:
        written, positions, count = convert(data, str(args.source), args.out, args.unpack)
    except PackError as exc:
        return fail(str(exc))
    try:
        write_new(args.out, written)
    except OSError as exc:
        return fail(f"cannot write '{args.out}': {exc.strerror or exc}")

    def per(size: int) -> str:
        """Bytes a position, in words."""
        return f"{size / positions:.3f} bytes a position" if positions else "no positions"

    print(f"{PROG}: {args.source}: {len(data):,} bytes ({per(len(data))}); {positions:,} positions in "
          f"{count:,} games")
    print(f"{PROG}: {args.out}: {len(written):,} bytes ({per(len(written))}), "
          f"sha256 {hashlib.sha256(written).hexdigest()}")
    return EXIT_OK
