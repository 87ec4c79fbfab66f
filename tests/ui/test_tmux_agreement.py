"""A proposal to end the match reaches a person's full-screen client, in tmux at 80x24: the
status line counts down the time left before the others may name them too (ticking, not a
line per second), the message line says what E does and the countdown, whole; E then y joins
the proposal and the countdown goes. The table is `agreement_helpers`' (in-memory peers seen
through a real `Driver` and `DriverFeed`), so no bot peer processes need to start.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from test_tmux import TMUX, Pane, pane  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

HELPER = Path(__file__).with_name("agreement_helpers.py")
ROOT = Path(__file__).resolve().parents[2]
COUNT = re.compile(r"end proposed (\d+:\d\d)\s*$")


def _status(screen: str) -> str | None:
    """The time left the status line (the second) shows, if it shows one."""
    lines = screen.splitlines()
    m = COUNT.search(lines[1]) if len(lines) > 1 else None
    return m.group(1) if m is not None else None


def test_a_proposal_arrives_and_the_header_counts_down_whole_at_80x24(
    pane: Pane, tmp_path: Path  # noqa: F811
) -> None:
    pane.type(f"PYTHONPATH={shlex.quote(str(ROOT))} {shlex.quote(sys.executable)} "
              f"{shlex.quote(str(HELPER))} {shlex.quote(str(tmp_path))}")  # fmt: skip
    pane.send("Enter")
    screen = pane.wait_for(lambda s: _status(s) is not None, "the countdown in the header")
    lines = screen.splitlines()
    first = COUNT.search(lines[1])
    assert first is not None and first.group(1) in ("2:00", "1:59", "1:58"), lines[1]
    row = next(x for x in lines if "E agrees, or play on" in x)
    assert row.rstrip().endswith(f"may be named in {first.group(1)}") and "…" not in row, screen
    assert len(lines) == 24 and all(len(x) <= 80 for x in lines)
    # It ticks: a later reading of the same line shows less time left.
    later = pane.wait_for(lambda s: _status(s) not in (None, first.group(1)),
                          "the countdown to tick")  # fmt: skip
    assert sum("proposes to end the match" in x for x in later.splitlines()) == 1  # not per s
    pane.type("E")
    pane.wait_for(lambda s: "Agree: player0 proposes to end the match without player2?" in s,
                  "the question E asks")  # fmt: skip
    pane.type("y")
    # The message line says it at once; the header's countdown goes once the session has
    # taken the agreement in.
    pane.wait_for(lambda s: "joined the agreement to end" in s, "the agreement joined")
    pane.wait_for(lambda s: "proposed" not in s.splitlines()[1], "the countdown gone")
    pane.type("q")
    pane.wait_for(lambda s: "Quit" in s, "the quit question")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")
