"""A whole hand against bot peer processes over loopback, in the real client in tmux, by keys,
at 80x24 and 120x40: the feed names each bot's draw and discard (and every take of the pile),
the header's points on the table grow when a meld is laid down, and the hand-over panel is
still on screen 10 s after the hand ended, until a key is pressed.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from test_tmux import TMUX, Pane, pane, play_turn  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

BOTS = ("bot1", "bot2", "bot3")
SETUP = 300.0  # seconds for the table to be set up on a loaded machine
HAND = 600.0
DEALT = re.compile(r"^ Hand +[1-9][0-9]? ", re.M)  # the hand row, once cards are dealt


def _table_points(status: str) -> list[int]:
    return [int(x) for x in re.findall(r" \+(\d+)", status)]


# (120x40 in the slow run: the default run draws that size without tmux, test_table_state)
@pytest.mark.parametrize(
    ("cols", "rows"), [(80, 24), pytest.param(120, 40, marks=pytest.mark.slow)]
)
def test_a_hand_against_bot_peers_is_told_move_by_move_and_its_end_held(
    pane: Pane, tmp_path: Path, cols: int, rows: int  # noqa: F811
) -> None:
    pane.tmux("resize-window", "-t", "t", "-x", str(cols), "-y", str(rows))
    pane.type(f"BURACO_P2P_HOME={tmp_path}/home BURACO_P2P_DATA={tmp_path}/data "
              "buraco-p2p play --rules us --bot-delay 0.15")  # fmt: skip
    pane.send("Enter")
    # The feed's line for the deal can scroll away behind the bots' first moves before a
    # poll sees it (three feed rows at 80x24): the dealt hand row says it as well.
    pane.wait_for(lambda s: "hand 1 dealt by" in s or DEALT.search(s) is not None,
                  "the first deal", SETUP)  # fmt: skip
    said: set[str] = set()
    grew = False
    last_points: list[int] | None = None
    end = time.monotonic() + HAND
    while True:
        screen = pane.screen()
        lines = screen.splitlines()
        if "is over" in screen:
            break
        assert time.monotonic() < end, f"the hand did not end; the pane shows:\n{screen}"
        for line in lines:
            said.add(line.strip())
        if len(lines) > 1 and " / 3000" in lines[1]:
            points = _table_points(lines[1].split(" / 3000")[0])
            if last_points is not None and len(points) == len(last_points):
                grew = grew or any(b > a for a, b in zip(last_points, points, strict=True))
            last_points = points
        play_turn_at(pane, lines, rows)
        time.sleep(0.05)
    ended = time.monotonic()
    for bot in BOTS:
        assert any(s.startswith(f"{bot} drew ") or s.startswith(f"{bot} took the pile")
                   for s in said), (bot, sorted(said))  # fmt: skip
        assert any(s.startswith(f"{bot} discarded ") for s in said) or any(
            s.startswith(f"{bot} went out") for s in said), (bot, sorted(said))
    takes = [s for s in said if " took the pile (" in s]
    assert all(re.search(r"took the pile \(\d+ cards?, top ", s) for s in takes)
    assert grew, "the header's points on the table never grew"
    # The summary stays, with the next deal held behind it, until a key is pressed.
    while time.monotonic() < ended + 10:
        time.sleep(0.5)
    held = pane.screen()
    assert "is over" in held and "hand total" in held and "match total" in held, held
    assert "Next hand:" in held
    pane.send("Enter")
    try:
        pane.wait_for(lambda s: "hand 2" in s.splitlines()[0], "the second hand", 60)
    except AssertionError:
        # as a person would: the summary still up a minute later, Enter once more
        if "Next hand:" in pane.screen():
            pane.send("Enter")
        pane.wait_for(lambda s: "hand 2" in s.splitlines()[0], "the second hand on screen",
                      SETUP)  # fmt: skip
    pane.type("q")
    pane.wait_for(lambda s: "Quit the match?" in s, "the quit question")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting", SETUP)


def play_turn_at(p: Pane, lines: list[str], rows: int) -> None:
    """`play_turn` for a pane of any height (it reads the last rows)."""
    if len(lines) < rows:
        return
    play_turn(p, "\n".join(lines))
