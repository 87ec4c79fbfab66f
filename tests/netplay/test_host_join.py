"""`host` / `join`: once every seat is taken and every player typed /ready, the lobby hands the
table to the match; `host --bots N` fills seats with bot peer processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from buraco_p2p import codec
from buraco_p2p.logfile import decode_log
from tests.line_proc import LineProc


def test_a_person_joins_two_bots_and_the_host_then_everyone_ready_starts_the_match(
    tmp_path: Path,
) -> None:
    host = LineProc(["host", "--bots", "2", "--auto-approve", "--listen", "127.0.0.1",
                     "--nick", "ana"], tmp_path / "a")  # fmt: skip
    guest = None
    try:
        host.wait_for("invite code")
        code = host.wait_for("BRC-").strip()
        guest = LineProc(["join", code, "--listen", "127.0.0.1", "--nick", "bea"],
                         tmp_path / "b")  # fmt: skip
        host.wait_for("every seat is taken", 120)
        # The joiner marks the host's two bots, from the host's `bots` message: the notice
        # names both once both are seated, and its seat list marks them and no one else.
        while len(guest.wait_for("the host runs bots").split(":", 1)[1].split(",")) != 2:
            pass
        guest.type("/who")
        seats = [guest.wait_for(f"seat {n}:") for n in range(1, 5)]
        assert [("[bot]" in line) for line in seats].count(True) == 2, seats
        assert not any("[bot]" in line for line in seats if "ana" in line or "bea" in line)
        host.type("/ready")
        guest.type("/ready")
        host.wait_for("everyone is ready")
        guest.wait_for("everyone is ready")
        seats = host.wait_for("seats drawn")
        assert "ana" in seats and "bea" in seats
        guest.wait_for("seats drawn")
        host.wait_for("dealt")
        guest.wait_for("dealt")
        names = guest.table_names()
        assert names.count("(bot)") == 2 and "bea (you)" in names, names
        assert "ana (bot)" not in names, names
    finally:
        host.close()
        if guest is not None:
            guest.close()
    logs = list((tmp_path / "a" / "tables").glob("*/log"))
    assert len(logs) == 1
    assert len(decode_log(logs[0].read_bytes())) > 10
    # Both keep the marks with the table, the same two keys: `resume` marks them again.
    marks = [codec.unpack(p.read_bytes()) for p in (logs[0].parent / "bots",
             tmp_path / "b" / "tables" / logs[0].parent.name / "bots")]  # fmt: skip
    assert len(marks[0]) == 2 and marks[0] == marks[1], marks


def test_host_refuses_an_impossible_seat_count_in_one_line(tmp_path: Path) -> None:
    for argv in (["--players", "5"], ["--players", "0"], ["--rule", "teams=2"]):
        done = subprocess.run(
            [sys.executable, "-m", "buraco_p2p", "host", *argv],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
            env={**os.environ, "BURACO_P2P_HOME": str(tmp_path / "cfg")},
        )  # fmt: skip
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
