"""Where the compiled search's time goes: `perf` samples of the bench, named by Numba's compiled functions.

    python scripts/kernel_profile.py [--depth 8] [--freq 4000] [--top 30] [--annotate SYMBOL]

perf cannot name the code Numba loads from its cache (no perf map, no JIT events in Numba's LLVM). This
script runs itself under `perf record`: the child keeps the object code of every library Numba loads
(a hook on CPUCodeLibrary._set_compiled_object), reads each function's size from it with `nm -S`, asks
the JIT for its address and writes /tmp/perf-PID.map, which `perf report` reads. Then the child runs the
bench (`run_bench`, the default network) and the parent prints the samples by function: the share of the
whole run and of the samples inside compiled code. LLVM inlines small kernels into their callers, so a
name stands for itself and what was inlined into it (`negamax` holds the make-move, the picker and the
TT, for example); docs/developing.md's profile says how the parts inside are measured.

`--annotate NAME` (a substring of a name in the table) also prints the 40 hottest instructions of that
function: the child dumps the code of each compiled copy of it from memory (perf cannot read it after the
process ended), and objdump disassembles the copy with the most samples.

Needs Linux `perf` (Debian: `apt-get install linux-perf`) and `nm` (binutils), and
/proc/sys/kernel/perf_event_paranoid at most 2 (or root).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"^_ZN(?:7cpython)?(?P<rest>.+)$")


def short_name(mangled: str) -> str:
    """module.function of a Numba symbol (_ZN7cpython7garfish6engine6search4tree13search_kernelB2v1...
    -> `search.tree.search_kernel (cpython wrapper)`), else the symbol itself."""
    match = NAME.match(mangled)
    if match is None:
        return mangled
    rest, parts = match["rest"], []
    while rest and rest[0].isdigit():
        digits = re.match(r"\d+", rest)
        assert digits is not None
        size = int(digits.group())
        rest = rest[digits.end():]
        parts.append(rest[:size])
        rest = rest[size:]
    if parts[:2] == ["garfish", "engine"]:
        parts = parts[2:]
    wrapper = " (Python wrapper)" if mangled.startswith("_ZN7cpython") else ""
    return ".".join(parts) + wrapper


def child(depth: int, dump: str | None, folder: Path) -> None:
    """Load the kernels keeping their object code, write the perf map, run the bench."""
    from numba.core import codegen

    captured: list = []
    set_object = codegen.CPUCodeLibrary._set_compiled_object

    def keep(library, value):  # type: ignore[no-untyped-def]
        captured.append((library, bytes(value)))
        return set_object(library, value)

    codegen.CPUCodeLibrary._set_compiled_object = keep  # type: ignore[method-assign]
    from garfish.engine.evaluation.evalfile import DEFAULT_EVAL_FILE, load_evaluator
    from garfish.engine.services.bench import run_bench
    from garfish.engine.services.warmup import load_kernels

    load_kernels()
    evaluator = load_evaluator(DEFAULT_EVAL_FILE)
    run_bench(depth=2, evaluator=evaluator)  # every kernel the bench calls is loaded before the map is written
    functions: dict[int, tuple[int, str]] = {}
    for library, code in captured:
        obj = folder / "library.o"
        obj.write_bytes(code)
        listing = subprocess.run(["nm", "-S", "--defined-only", str(obj)], capture_output=True, text=True,
                                 check=True).stdout
        engine = library._codegen._engine
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) != 4 or parts[2] not in "tTwW":
                continue
            address = engine.get_function_address(parts[3])
            if address:
                functions[address] = (int(parts[1], 16), parts[3])
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for address, (size, name) in sorted(functions.items()):
            out.write(f"{address:x} {size:x} {short_name(name)}\n")
    if dump:  # every compiled copy of the function (one a signature, and where another kernel compiled it in)
        import ctypes

        for index, (address, (size, name)) in enumerate(sorted(functions.items())):
            if dump in short_name(name) and not name.startswith("_ZN7cpython"):
                (folder / f"code-{index}.bin").write_bytes(ctypes.string_at(address, size))
                (folder / f"code-{index}.txt").write_text(f"{address:x} {size} {short_name(name)}\n")
    with open(folder / "control", "w") as control, open(folder / "ack") as ack:
        control.write("enable\n")
        control.flush()
        ack.readline()
        result = run_bench(depth=depth, evaluator=evaluator)
        control.write("disable\n")
        control.flush()
        ack.readline()
    print(f"bench depth {depth}: {result.nodes} nodes, {result.nps} nodes/s (under perf)", file=sys.stderr)


def print_table(perf: str, data: Path, top: int) -> None:
    """The samples by function, as a Markdown table: the share of all samples and of the compiled code's."""
    report = subprocess.run([perf, "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso,sym",
                             "--percent-limit", "0.05", "-q", "-t", "|"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in report.splitlines():
        fields = [field.strip() for field in line.split("|")]
        if len(fields) >= 3 and fields[0].endswith("%"):
            rows.append((float(fields[0][:-1]), fields[1], re.sub(r"^\[.\]\s*", "", fields[2])))
    jit = sum(share for share, dso, _ in rows if dso.startswith("[JIT]"))
    print(f"| function | share of all samples | share of compiled code ({jit:.1f}% of all) |")
    print("|---|---:|---:|")
    for share, dso, symbol in rows[:top]:
        compiled = dso.startswith("[JIT]")
        inside = f"{100 * share / jit:.1f}%" if compiled and jit else ""
        where = symbol if compiled else f"{symbol} ({dso})"
        print(f"| {where} | {share:.1f}% | {inside} |")


def print_annotation(perf: str, data: Path, copies: list[Path]) -> None:
    """The 40 hottest instructions of the most sampled of the function's dumped copies (code-N.txt: its
    address, size and name; code-N.bin: its bytes)."""
    samples = [int(ip, 16) for ip in subprocess.run([perf, "script", "-i", str(data), "-F", "ip"],
                                                    capture_output=True, text=True, check=True).stdout.split()]
    best: tuple[int, Path, int, str, collections.Counter] = (-1, Path(), 0, "", collections.Counter())
    for copy in copies:
        start_text, size_text, title = copy.read_text().split(" ", 2)
        start, size = int(start_text, 16), int(size_text)
        hits = collections.Counter(ip - start for ip in samples if 0 <= ip - start < size)
        if sum(hits.values()) > best[0]:
            best = (sum(hits.values()), copy.with_suffix(".bin"), start, title.strip(), hits)
    total, code, start, title, hits = best
    listing = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", str(code)],
                             capture_output=True, text=True, check=True).stdout
    lines = {}
    for line in listing.splitlines():
        match = re.match(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)$", line)
        if match:
            lines[int(match[1], 16)] = match[2]
    print(f"\n{title} (at {start:x}, the most sampled of {len(copies)} copies): {total} samples; "
          "the hottest instructions (a sample falls on the instruction after the one that waited)")
    for offset, count in hits.most_common(40):
        print(f"{offset:6x} {100 * count / max(total, 1):5.1f}%  {lines.get(offset, '?')}")


def main() -> int:
    """Record the bench under perf and print where its samples fall."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--freq", type=int, default=4000, help="samples a second")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--annotate", help="also list the hottest instructions of this function")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.depth, args.annotate, Path(args.child))
        return 0
    perf = shutil.which("perf")
    if perf is None:
        sys.exit("perf is not installed (Debian: apt-get install linux-perf)")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = folder / "perf.data"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", str(folder), "--depth", str(args.depth)]
        if args.annotate:
            command += ["--annotate", args.annotate]
        os.mkfifo(folder / "control")
        os.mkfifo(folder / "ack")
        # Recording starts disabled (-D -1); the child enables it for the bench alone, through the control fifo
        subprocess.run([perf, "record", "-q", "-D", "-1", "--control", f"fifo:{folder / 'control'},{folder / 'ack'}",
                        "-F", str(args.freq), "-o", str(data), "--", *command], check=True)
        print_table(perf, data, args.top)
        copies = sorted(folder.glob("code-*.txt"))
        if args.annotate and copies:
            print_annotation(perf, data, copies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
