"""`host` / `join`: once every seat is taken and every player typed /ready, the lobby hands the
table to the match; `host --bots N` fills seats with bot peer processes."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from buraco_p2p.logfile import decode_log


class Proc:
    def __init__(self, argv: list[str], home: Path) -> None:
        env = {**os.environ, "BURACO_P2P_HOME": str(home / "cfg")}
        self.p = subprocess.Popen(
            [sys.executable, "-m", "buraco_p2p", *argv], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        out = self.p.stdout
        assert out is not None
        threading.Thread(target=lambda: [self.lines.put(x) for x in out], daemon=True).start()

    def wait_for(self, text: str, timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"{text!r} not seen; got:\n{''.join(self.seen[-30:])}")

    def type(self, line: str) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def close(self) -> None:
        if self.p.poll() is None:
            self.type("quit")
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def test_a_person_joins_two_bots_and_the_host_then_everyone_ready_starts_the_match(
    tmp_path: Path,
) -> None:
    host = Proc(["host", "--bots", "2", "--auto-approve", "--listen", "127.0.0.1", "--nick", "ana",
                 "--data-dir", str(tmp_path / "a")], tmp_path / "a")  # fmt: skip
    guest = None
    try:
        host.wait_for("invite code")
        code = host.wait_for("BRC-").strip()
        guest = Proc(["join", code, "--listen", "127.0.0.1", "--nick", "bea",
                      "--data-dir", str(tmp_path / "b")], tmp_path / "b")  # fmt: skip
        host.wait_for("every seat is taken", 120)
        host.type("/ready")
        guest.type("/ready")
        host.wait_for("everyone is ready")
        guest.wait_for("everyone is ready")
        seats = host.wait_for("seats drawn")
        assert "ana" in seats and "bea" in seats
        guest.wait_for("seats drawn")
        host.wait_for("dealt")
        guest.wait_for("dealt")
    finally:
        host.close()
        if guest is not None:
            guest.close()
    logs = list((tmp_path / "a" / "tables").glob("*/log"))
    assert len(logs) == 1
    assert len(decode_log(logs[0].read_bytes())) > 10


def test_host_refuses_an_impossible_seat_count_in_one_line(tmp_path: Path) -> None:
    for argv in (["--players", "5"], ["--players", "0"], ["--rule", "teams=2"]):
        done = subprocess.run(
            [sys.executable, "-m", "buraco_p2p", "host", *argv],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
            env={**os.environ, "BURACO_P2P_HOME": str(tmp_path / "cfg")},
        )  # fmt: skip
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
