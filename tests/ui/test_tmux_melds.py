"""Eleven melds on the table, in the real client in tmux at 80x24: `a` on a card that fits
meld 1 and meld 11 asks which, `1` waits for a second digit (it may begin 11), and a second
`1` puts the card on meld 11, not on meld 1. The table is `position_helpers`' (a bot-played
practice position), so nothing but the client needs to start.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from position_helpers import SLOT, eleven_melds
from test_tmux import TMUX, Pane, pane  # noqa: F401 - the fixture

from buraco_p2p.text.glyphs import Glyphs

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

HELPER = Path(__file__).with_name("position_helpers.py")
ROOT = Path(__file__).resolve().parents[2]


def _meld_rows(screen: str) -> dict[int, str]:
    """The side's numbered meld rows of the `v` panel, by number."""
    rows: dict[int, str] = {}
    for line in screen.splitlines():
        m = re.match(r" ?(\d{1,2}) ", line)
        if m is not None and int(m.group(1)) not in rows:
            rows[int(m.group(1))] = line
    return rows


def test_a_reaches_the_eleventh_meld(pane: Pane) -> None:  # noqa: F811
    table, _ = eleven_melds()
    view = table.views[table.referee.turn]
    card = Glyphs(deck_size=view.rules.deck_size).card(view.known[SLOT])
    pane.type(f"PYTHONPATH={shlex.quote(str(ROOT))} {shlex.quote(sys.executable)} "
              f"{shlex.quote(str(HELPER))}")  # fmt: skip
    pane.send("Enter")
    pane.wait_for(lambda s: "Your turn" in s, "the player's turn")
    pane.type("v")
    before = _meld_rows(pane.wait_for(lambda s: "Pile and melds" in s, "the melds panel"))
    assert 11 in before, before
    pane.send("Escape")
    pane.wait_for(lambda s: " Hand " in s, "the table again")
    # The cursor onto the card (the hand row, read from the screen).
    for _ in range(20):
        lines = pane.screen().splitlines()
        hand = next(i for i, x in enumerate(lines) if x.startswith(" Hand "))
        at = lines[hand + 1].index("^")
        if lines[hand][at : at + 2] == card:
            break
        pane.send("Right")
        pane.wait_for(lambda s, k=hand + 1, old=lines[hand + 1]: s.splitlines()[k] != old,
                      "the cursor to move")  # fmt: skip
    else:
        raise AssertionError(f"{card} not found in the hand")
    pane.type("a")
    asked = pane.wait_for(lambda s: "Add to which meld?" in s, "the question")
    assert ", 11" in asked and "type its number" in asked, asked
    pane.type("1")
    pane.wait_for(lambda s: "1_" in s, "the first digit, waiting for another")
    pane.type("1")
    pane.wait_for(lambda s: "Add to which meld?" not in s, "the card added")
    pane.type("v")
    after = _meld_rows(pane.wait_for(lambda s: "Pile and melds" in s, "the melds panel"))
    assert after[1] == before[1], (before[1], after[1])  # meld 1 untouched
    assert after[11] != before[11] and card in after[11], (before[11], after[11])
    pane.send("Escape")
    pane.type("q")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")
