"""Quit and resume, as a person does it, in the real client in tmux at 80x24: `play` against
bot peer processes, quit in the first hand; the terminal says how to come back, on a line of
its own; that command brings the table back with the hand told from its deal (your own draw
included), the bots still marked as bots, and the preset's own target.

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


def test_quit_then_the_printed_command_resumes_the_table(
    pane: Pane, tmp_path: Path  # noqa: F811
) -> None:
    env = f"BURACO_P2P_HOME={tmp_path}/home BURACO_P2P_DATA={tmp_path}/data"
    pane.type(f"{env} buraco-p2p play --rules classic --bot-delay 0.1")
    pane.send("Enter")
    pane.wait_for(lambda s: " Hand " in s and "dealt by" in s, "the first deal", SETUP)
    end = time.monotonic() + SETUP
    while "you discarded " not in pane.screen():  # one turn of ours, told in the feed
        assert time.monotonic() < end, pane.screen()
        play_turn(pane, pane.screen())
        time.sleep(0.1)
    pane.type("q")
    pane.wait_for(lambda s: "Quit the match?" in s, "the quit question")
    pane.type("y")
    left = pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", SETUP)
    lines = [line.strip() for line in left.splitlines()]
    at = next(i for i, line in enumerate(lines) if line.endswith("come back with:"))
    again = lines[at + 1]
    assert re.fullmatch(r"(buraco-p2p|\S+ -m buraco_p2p) resume [0-9a-f]{32}", again), left
    assert list((tmp_path / "data").glob("bots-*")), "an unfinished table keeps its bots"
    pane.type(f"clear; {env} {again}")
    pane.send("Enter")
    back = pane.wait_for(lambda s: "(resumed)" in s.splitlines()[0] and " Hand " in s
                         and "dealt by" not in s.splitlines()[1], "the resumed table", SETUP)
    time.sleep(2)  # what was played before is told at once: let it be told
    assert "opponent bot" in back and "partner bot" in back, back  # the marks came back
    assert "/ 2000" in back.splitlines()[1], back  # classic's target
    pane.type("C")  # the whole feed: the hand told from its deal
    feed = pane.wait_for(lambda s: "Chat and table feed" in s, "the feed panel")
    for _ in range(20):  # back to its start
        if "hand 1 dealt by " in feed:
            break
        pane.send("PageUp")
        time.sleep(0.2)
        feed = pane.screen()
    told = [line.strip() for line in feed.splitlines()]
    assert any(line.startswith("hand 1 dealt by ") for line in told), feed
    dealt = next(i for i, line in enumerate(told) if line.startswith("hand 1 dealt by "))
    assert any(line.startswith("you drew ") for line in told[dealt:]), feed
    assert any(line.startswith("you discarded ") for line in told[dealt:]), feed
    pane.send("Escape")
    pane.type("q")
    pane.wait_for(lambda s: "Quit the match?" in s, "the quit question")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", SETUP)
