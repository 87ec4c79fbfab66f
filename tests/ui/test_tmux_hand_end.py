"""The end of every hand, told in order, in the real client in tmux at 80x24: a match of two
hands (`--rule hands=2`) against bot peer processes. At each hand's end the move that ended
it is in the feed before the panel appears, and the header shows the old totals until then
(the totals change only with the panel); the header says "hand 1 of 2", then "hand 2 of 2",
and no screen names a point target the match does not have.

A whole match played by keys takes minutes, so it runs with the slow tests; the default run
holds the same order on the real `DriverFeed` in test_told_order.py, in seconds.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from test_tmux import TMUX, Pane, pane, play_turn  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

SETUP = 300.0
MATCH = 1200.0
SCORES = re.compile(r"^ Us (-?\d+) .*Them (-?\d+)")
PANEL = re.compile(r" Hand \d is over: ")
ENDED = ("went out: the hand is over", "the stock is out: the hand is over")


def _scores(screen: str) -> tuple[int, int] | None:
    lines = screen.splitlines()
    m = SCORES.match(lines[1]) if len(lines) > 1 else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def _totals(panel: str) -> tuple[int, int]:
    row = next(line for line in panel.splitlines() if line.startswith(" match total"))
    us, them = row.split()[2:4]
    return int(us), int(them)


@pytest.mark.slow
def test_every_hand_end_is_told_before_its_panel_and_the_match_says_hand_1_of_2(
    pane: Pane, tmp_path: Path  # noqa: F811
) -> None:
    pane.type(f"BURACO_P2P_HOME={tmp_path}/home BURACO_P2P_DATA={tmp_path}/data "
              "buraco-p2p play --rules us --rule hands=2 --bot-delay 0.5")  # fmt: skip
    pane.send("Enter")
    pane.wait_for(lambda s: " Hand " in s and "hand 1 of 2" in s.splitlines()[1],
                  "the first deal", SETUP)  # fmt: skip
    expected = (0, 0)  # the match totals the header must show until the panel
    ends = 0
    last_table = ""
    end = time.monotonic() + MATCH
    while ends < 2:
        assert time.monotonic() < end, f"the match did not end; the pane shows:\n{pane.screen()}"
        screen = pane.screen()
        assert "3000" not in screen and "target" not in screen, screen
        if PANEL.search(screen):  # the panel (the feed's own line says "the hand is over")
            ends += 1
            assert any(e in last_table for e in ENDED), (
                f"the panel came before the move that ended hand {ends}:\n{last_table}")
            assert _scores(last_table) == expected, last_table
            assert f"{ends} of 2 hands played" in screen, screen
            expected = _totals(screen)
            if ends == 2:
                assert "The match is over." in screen, screen
                break
            pane.send("Enter")
            pane.wait_for(lambda s: not PANEL.search(s), "the panel closed")
            continue
        lines = screen.splitlines()
        if len(lines) > 1 and lines[1].startswith(" Us "):
            assert f"hand {ends + 1} of 2" in lines[1], lines[1]
            assert _scores(screen) == expected, (expected, lines[1])
            last_table = screen
        play_turn(pane, screen)
        time.sleep(0.05)
    pane.type("q")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", SETUP)
    back = pane.tmux("capture-pane", "-p", "-J", "-t", "t")  # lines the terminal wrapped, whole
    # The log is kept, and its commands are printed whole, each on a line of its own.
    kept = list((tmp_path / "data" / "logs").glob("*.log"))
    assert len(kept) == 1, back
    said = [line.strip() for line in back.splitlines()]
    assert any(line.endswith(f" verify {kept[0]}") for line in said), back  # one line each
    assert any(line.endswith(f" replay {kept[0]}") for line in said), back
    # The match is over: its bot peers' directories are gone from the data directory.
    assert not list((tmp_path / "data").glob("bots-*"))
