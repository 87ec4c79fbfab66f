"""The line client marks bot seats too: `host --bots N --line` in its lobby's seat list and at
the table, `play --line` at the table (real processes on 127.0.0.1, every proof on)."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

WAIT = 120.0


class _Line:
    """A `buraco-p2p` command in line mode: lines typed in, output lines read back."""

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

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + WAIT
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

    def close(self) -> None:
        if self.p.poll() is None:
            self.type("quit")
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def test_a_line_host_marks_the_bot_it_started(tmp_path: Path) -> None:
    host = _Line(["host", "--line", "--bots", "1", "--players", "2", "--listen", "127.0.0.1",
                  "--nick", "ana"], tmp_path)  # fmt: skip
    try:
        seat = host.wait_for("[bot]")
        assert "seat 2:" in seat and "ana" not in seat
        host.wait_for("every seat is taken")
        host.type("/ready")
        host.wait_for("dealt")
        names = host.table_names()
        assert names.count("(bot)") == 1 and "ana (you)" in names, names
    finally:
        host.close()


@pytest.mark.parametrize("players", [2, 4])
def test_play_line_marks_every_other_seat(tmp_path: Path, players: int) -> None:
    me = _Line(["play", "--line", "--players", str(players)], tmp_path)
    try:
        me.wait_for("dealt")
        names = me.table_names()
        assert names.count("(bot)") == players - 1 and names.count("(you)") == 1, names
    finally:
        me.close()
