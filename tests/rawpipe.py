"""A line-based pipe to a program under test (Garfish by default, or e.g. PolyGlot): write lines,
read its stdout lines with a timeout."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from conftest import ENGINE_CMD, ROOT


class RawEngine:
    """Minimal raw pipe to an engine process: write lines, read stdout lines with a timeout."""

    def __init__(self, argv: Optional[list[str]] = None, cwd: Optional[Path] = None) -> None:
        """Start argv (default: Garfish's UCI loop) in cwd (default: the project root)."""
        self.proc = subprocess.Popen(list(argv or ENGINE_CMD), cwd=str(cwd or ROOT), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines: queue.Queue[Optional[str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        """Reader thread: queue every output line, then None at end of output."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        """Write one line to the process."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, predicate: Callable[[str], bool], timeout: float) -> tuple[str, list[str]]:
        """Read until a line satisfies predicate; return it and the lines before it."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"timed out after {timeout} s; got {seen[-10:]}") from None
            if line is None:
                raise AssertionError(f"engine exited; got {seen[-10:]}")
            if predicate(line):
                return line, seen
            seen.append(line)

    def close(self) -> None:
        """Kill the process if it still runs and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=5)
