"""End to end in a real terminal: tmux runs `buraco-p2p play` at 80x24, keys are typed into
it and the pane is read back, as a person would see it.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

BIN = Path(sys.executable).parent
WAIT = 60.0  # seconds to wait for a screen state before failing


class Pane:
    """One tmux server and session of its own, with a shell in an 80x24 window."""

    def __init__(self) -> None:
        self.socket = f"buraco-test-{uuid.uuid4().hex[:10]}"
        env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}", "PS1": "$ "}
        env.pop("TMUX", None)
        env.pop("NO_COLOR", None)
        self.env = env
        self.tmux(
            "new-session", "-d", "-x", "80", "-y", "24", "-s", "t",
            "env", "-u", "TMUX", "bash", "--norc", "--noprofile",
        )

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-L", self.socket, "-f", "/dev/null", *args],
            env=self.env, capture_output=True, text=True, timeout=20, check=True,
        )
        return done.stdout

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "t", "-l", text)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def wait_for(self, pred: Callable[[str], bool], what: str, limit: float = WAIT) -> str:
        end = time.monotonic() + limit
        while True:
            screen = self.screen()
            if pred(screen):
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"gave up waiting for {what}; the pane shows:\n{screen}")
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(
            [TMUX or "tmux", "-L", self.socket, "kill-server"],
            capture_output=True, timeout=20, check=False,
        )


@pytest.fixture
def pane() -> Iterator[Pane]:
    p = Pane()
    try:
        yield p
    finally:
        p.close()


def play_turn(p: Pane, screen: str) -> None:
    """Take one step of the human's turn by keys, read from the screen: on their turn (the
    status line says so) draw when the keys line offers it, else discard the card at the
    cursor, moving the cursor on when the engine refuses that card."""
    lines = screen.splitlines()
    if len(lines) < 24 or "your turn" not in lines[1]:
        return
    if "d draw" in lines[-1]:
        p.type("d")
    elif lines[-2].startswith(" Your turn"):
        p.type("x")
    else:  # a refusal on the message line: try the next card
        p.send("Escape")
        p.send("Right")
        p.type("x")


def test_play_draws_the_table_and_plays_a_hand_to_its_end(pane: Pane) -> None:
    pane.type("buraco-p2p play --seed 3 --bot-delay 0 --rules us")
    pane.send("Enter")
    screen = pane.wait_for(lambda s: "Your turn" in s, "the player's first turn")
    lines = screen.splitlines()
    assert "practice table" in lines[0] and "seed 3" in lines[0]
    assert "Us 0" in screen and "Them 0" in screen and "/ 3000" in screen
    assert "your turn" in screen
    hand = next(line for line in lines if line.startswith(" Hand "))
    assert sum(ch in "♠♥♦♣" for ch in hand) + hand.count("JK") >= 11
    assert "Stock" in screen and "pots left 2" in screen
    assert "d draw" in lines[-1] or "meld" in lines[-1]

    # Play by keys until the hand is over; bots move at once, so this takes seconds.
    end = time.monotonic() + 240
    while True:
        screen = pane.screen()
        if "is over" in screen:
            break
        assert time.monotonic() < end, f"the hand did not end; the pane shows:\n{screen}"
        play_turn(pane, screen)
        time.sleep(0.05)
    assert "hand total" in screen and "match total" in screen
    assert "melds (card points)" in screen
    pane.send("Enter")
    pane.wait_for(lambda s: "hand 2" in s.splitlines()[0], "the second hand's deal")
    pane.type("q")
    pane.wait_for(lambda s: "Quit the match?" in s, "the quit question")
    pane.type("y")
    back = pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")
    assert "practice table" not in back  # the full screen is gone, the terminal restored


def test_ctrl_z_suspends_and_fg_resumes_a_working_client(pane: Pane) -> None:
    pane.type("buraco-p2p play --seed 5 --bot-delay 0")
    pane.send("Enter")
    pane.wait_for(lambda s: "Your turn" in s, "the player's first turn")
    pane.send("C-z")
    pane.wait_for(lambda s: "Stopped" in s or "stopped" in s, "the shell's job-stopped notice")
    pane.type("fg")
    pane.send("Enter")
    pane.wait_for(lambda s: "Your turn" in s, "the table drawn again after fg")
    # Keys still reach the client at once after fg: the help panel opens and closes.
    pane.type("?")
    pane.wait_for(lambda s: " Keys" in s and "Esc closes" in s, "the help panel")
    pane.send("Escape")
    pane.wait_for(lambda s: "Your turn" in s, "the table after closing help")
    pane.type("q")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")


def test_a_small_terminal_gets_a_clear_message(pane: Pane) -> None:
    pane.tmux("resize-window", "-t", "t", "-x", "60", "-y", "20")
    pane.type("buraco-p2p play --seed 1 --bot-delay 0")
    pane.send("Enter")
    pane.wait_for(lambda s: "needs at least 80x24" in s, "the too-small message")
    pane.tmux("resize-window", "-t", "t", "-x", "80", "-y", "24")
    pane.wait_for(lambda s: "practice table" in s, "the table after the resize")
    pane.type("q")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")


def test_host_shows_the_lobby_with_the_invite_code_at_80x24(pane: Pane, tmp_path: Path) -> None:
    data, config = tmp_path / "data", tmp_path / "config"
    pane.type(f"buraco-p2p host --nick Alice --listen 127.0.0.1 --players 2 "
              f"--data-dir {data} --config-dir {config}")  # fmt: skip
    pane.send("Enter")
    screen = pane.wait_for(lambda s: "Seats 1/2" in s, "the lobby")
    lines = screen.splitlines()
    assert len(lines) == 24 and "lobby · host" in lines[0] and "Alice" in lines[0]
    files = list((data / "invites").glob("*.txt"))
    assert len(files) == 1
    code = files[0].read_text().strip()
    start = next(i for i, line in enumerate(lines) if line.startswith(" BRC-"))
    shown = "".join(line.strip() for line in lines[start : start + 4])
    assert shown.startswith(code), (shown, code)  # the whole code, as it can be selected
    assert "1 Alice (you, host)" in screen and "Rules us" in screen
    assert "r ready" in lines[-1] and "q quit" in lines[-1]
    pane.type("p")
    pane.wait_for(lambda s: "Rules us " not in s and "* rules:" in s, "the next preset")
    pane.type("q")
    back = pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")
    assert "Invite code" not in back and "r ready" not in back


def _hand_cards(screen: str) -> list[str]:
    line = next(line for line in screen.splitlines() if line.startswith(" Hand "))
    return line.split()[2:]


def test_x_on_a_wild_card_asks_once_before_discarding_it(pane: Pane) -> None:
    pane.type("buraco-p2p play --seed 2 --bot-delay 0 --rules us")  # a deuce in the first hand
    pane.send("Enter")
    pane.wait_for(lambda s: "Your turn" in s and "d draw" in s, "the player's first turn")
    pane.type("d")
    screen = pane.wait_for(lambda s: "Hand 12" in s and "x discard" in s, "the card drawn")
    cards = _hand_cards(screen)
    wild = next(i for i, card in enumerate(cards) if card[0] == "2" or card == "JK")
    pane.send("Home", *(["Right"] * wild))
    pane.type("x")
    asked = pane.wait_for(lambda s: "a wild card? y discards it, n keeps it" in s,
                          "the question before a wild is discarded")  # fmt: skip
    assert f"Discard {cards[wild]}, a wild card?" in asked
    assert "Hand 12" in asked  # nothing discarded yet
    pane.type("n")
    kept = pane.wait_for(lambda s: "a wild card?" not in s, "the question gone after n")
    assert "Hand 12" in kept and _hand_cards(kept) == cards
    pane.type("x")
    pane.wait_for(lambda s: "a wild card?" in s, "the question again")
    pane.type("y")
    pane.wait_for(lambda s: "Hand 11" in s
                  and _hand_cards(s).count(cards[wild]) < cards.count(cards[wild]),
                  "the wild discarded after y")  # fmt: skip
    pane.type("q")
    pane.type("y")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")
