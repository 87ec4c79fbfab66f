"""The line client's `who` at the table (not only `/who` in the lobby) names every seat with
its fingerprint and how our link to it was made, as the lobby's seat list does (a real
`host --bots 1 --line` process on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

from tests.line_proc import LineProc


def test_who_at_the_table_says_how_each_link_was_made(tmp_path: Path) -> None:
    host = LineProc(["host", "--line", "--bots", "1", "--players", "2", "--listen", "127.0.0.1",
                     "--nick", "ana"], tmp_path)  # fmt: skip
    try:
        host.wait_for("every seat is taken")
        host.type("/ready")
        host.wait_for("dealt")
        host.type("who")
        mine = host.wait_for("seat ")
        other = host.wait_for("seat ")
        lines = sorted([mine, other])
        me = next(line for line in lines if "ana (you)" in line)
        bot = next(line for line in lines if "(bot)" in line)
        assert "[" not in me, me  # no link to ourselves
        assert bot.rstrip().endswith("[direct]"), bot  # the bot dialed us over loopback
        host.type("help")
        assert "how our link to each was made" in host.wait_for("who  ")
    finally:
        host.close()
