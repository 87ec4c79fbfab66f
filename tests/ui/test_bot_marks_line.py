"""The line client marks bot seats too: `host --bots N --line` in its lobby's seat list, at the
table and again after `resume` (the marks are saved with the table), `play --line` at the table
(real processes on 127.0.0.1, every proof on)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from buraco_p2p import codec
from tests.line_proc import LineProc


def test_a_line_host_marks_the_bot_it_started_and_again_once_resumed(tmp_path: Path) -> None:
    host = LineProc(["host", "--line", "--bots", "1", "--players", "2", "--listen", "127.0.0.1",
                     "--nick", "ana"], tmp_path)  # fmt: skip
    try:
        seat = host.wait_for("[bot]")
        assert "seat 2:" in seat and "ana" not in seat
        host.wait_for("every seat is taken")
        host.type("/ready")
        table = host.wait_for("after a crash: buraco-p2p resume").split()[1]
        host.wait_for("dealt")
        names = host.table_names()
        assert names.count("(bot)") == 1 and "ana (you)" in names, names
    finally:
        host.close()
    # The bot's key is saved with the table (0600), so a resumed host marks it again.
    saved = tmp_path / "tables" / table / "bots"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    keys = codec.unpack(saved.read_bytes())
    assert isinstance(keys, list) and len(keys) == 1 and len(keys[0]) == 32
    again = LineProc(["resume", table, "--line"], tmp_path)
    try:
        names = again.table_names()
        assert names.count("(bot)") == 1 and "ana (you)" in names, names
    finally:
        again.close()
    # A damaged file is a damaged table: one line, exit code 4; no file, no marks.
    saved.write_bytes(b"\xc1")
    damaged = LineProc(["resume", table, "--line"], tmp_path)
    said = [line for line in damaged.all_output() if line.strip()]
    assert damaged.p.returncode == 4, said
    assert len(said) == 1 and "buraco-p2p resume" in said[0] and "bots" in said[0], said
    saved.unlink()
    older = LineProc(["resume", table, "--line"], tmp_path)
    try:
        names = older.table_names()
        assert "(bot)" not in names and "ana (you)" in names, names
    finally:
        older.close()


@pytest.mark.parametrize("players", [2, 4])
def test_play_line_marks_every_other_seat(tmp_path: Path, players: int) -> None:
    me = LineProc(["play", "--line", "--players", str(players)], tmp_path)
    try:
        me.wait_for("dealt")
        names = me.table_names()
        assert names.count("(bot)") == players - 1 and names.count("(you)") == 1, names
    finally:
        me.close()
