"""The bot levels in the real client in tmux at 80x24, played by keys: the bot seats are
labelled with their level and a strong bot's turn reads "is thinking". The default run opens
a table of strong bots at a short budget and reads it; whole matches at each level, the strong
one at the default budget of a second a move, are among the slow tests.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import time

import pytest
from test_tmux import TMUX, Pane, pane, play_turn  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

MATCH = 1200.0  # seconds for a short match at the default budget on a loaded machine


def start(p: Pane, level: str, *more: str) -> None:
    p.type(f"buraco-p2p play --seed 4 --bot-delay 0.1 --rules us --rule target_score=300 "
           f"--bot-level {level} {' '.join(more)}")  # fmt: skip
    p.send("Enter")
    p.wait_for(lambda s: "practice table" in s, "the table")


def quit_table(p: Pane) -> None:
    p.type("q")
    p.wait_for(lambda s: "Quit" in s or s.rstrip().endswith("$"), "the quit question")
    if not p.screen().rstrip().endswith("$"):
        p.type("y")
    p.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")


def play_to_the_end(p: Pane) -> set[str]:
    """Play the match on screen to its result by keys; every line seen on the way."""
    seen: set[str] = set()
    end = time.monotonic() + MATCH
    while True:
        screen = p.screen()
        seen.update(line.strip() for line in screen.splitlines())
        if "s save the log" in screen:  # the match's result, held on screen
            return seen
        assert time.monotonic() < end, f"the match did not end; the pane shows:\n{screen}"
        if "Enter next hand" in screen:
            p.send("Enter")
        else:
            play_turn(p, screen)
        time.sleep(0.05)


def _labelled(seen: set[str], level: str) -> bool:
    return any(f"bot {level}" in line for line in seen)


def test_strong_bot_seats_are_labelled_and_think_on_their_turn(pane: Pane) -> None:  # noqa: F811
    start(pane, "strong", "--bot-think", "0.3")
    seen: set[str] = set()

    def thinking(screen: str) -> bool:
        seen.update(line.strip() for line in screen.splitlines())
        play_turn(pane, screen)  # the person's turns pass by keys until a bot's comes
        return any("is thinking" in line for line in seen)

    pane.wait_for(thinking, "a strong bot's turn")
    assert _labelled(seen, "strong"), sorted(seen)
    assert not any("'s turn" in line for line in seen), sorted(seen)  # every bot searches
    quit_table(pane)


@pytest.mark.slow
@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
def test_a_whole_match_at_each_level(pane: Pane, level: str) -> None:  # noqa: F811
    start(pane, level)
    seen = play_to_the_end(pane)
    quit_table(pane)
    assert _labelled(seen, level), sorted(seen)
    assert any("is thinking" in line for line in seen) == (level == "strong"), sorted(seen)
