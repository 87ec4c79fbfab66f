"""A `buraco-p2p` command run as a real process in line mode, for the tests that drive one
(`host`, `join`, `play`, `resume` with stdin and stdout on pipes, so never full screen).

Lines are typed into its stdin; a thread reads its output (stderr merged) into a queue, and
`wait_for` takes lines from it until one holds the text looked for, so the order a test waits
in is the order the process printed in. The identity lives in `home/cfg` and the tables in
`home` (`--data-dir`), so two processes with different homes are two people.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["WAIT", "LineProc"]

WAIT = 120.0  # real processes, every proof checked, on a shared machine


class LineProc:
    """One `buraco-p2p` process: `argv` after the program name, `--data-dir home` appended."""

    def __init__(self, argv: list[str], home: Path) -> None:
        env = {**os.environ, "BURACO_P2P_HOME": str(home / "cfg"), "PYTHONUNBUFFERED": "1"}
        self.p = subprocess.Popen(
            [sys.executable, "-m", "buraco_p2p", *argv, "--data-dir", str(home)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
            text=True,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        out = self.p.stdout
        assert out is not None
        threading.Thread(target=lambda: [self.lines.put(x) for x in out], daemon=True).start()

    def wait_for(self, text: str, timeout: float = WAIT) -> str:
        """The next output line holding `text` (fails once `timeout` passes or it exits)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.p.poll() is not None and self.lines.empty():
                    break  # it ended without saying it
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not seen; got:\n{''.join(self.seen[-30:])}")

    def type(self, line: str) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def table_names(self) -> str:
        """The players named on the table's side lines, after `show`."""
        self.type("show")
        sides = [self.wait_for("side 0 ("), self.wait_for("side 1 (")]
        return " ".join(line.split(":", 1)[0] for line in sides)

    def all_output(self, timeout: float = WAIT) -> list[str]:
        """Every line it printed, once it has ended by itself (fails after `timeout`)."""
        self.p.wait(timeout)
        while True:
            try:
                self.seen.append(self.lines.get(timeout=2))
            except queue.Empty:
                return self.seen

    def close(self) -> int:
        """Quit (or end) the process; its exit code."""
        if self.p.poll() is None:
            self.type("quit")
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode
