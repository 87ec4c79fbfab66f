"""Two people on one machine: a host and a joiner started in two terminals with the same HOME
and no directory options, as people first try a table. The second client takes a self of its
own (its own identity and tables), says so in one line, and the two form a table and play a
turn, each screen telling the other's move. The real client in tmux, at 80x24.

Skipped, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_tmux import TMUX, Pane

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

SETUP = 300.0
FINGERPRINT = re.compile(r"you: (\S+) ([a-z0-9]{4}(?:-[a-z0-9]{4}){4})")


def _run(p: Pane, home: Path, command: str) -> None:
    """`command` in `p` with HOME `home` and none of the variables that move the client's
    directories, as a person's shell would have it."""
    p.type(f"env -u BURACO_P2P_HOME -u BURACO_P2P_DATA -u XDG_CONFIG_HOME -u XDG_DATA_HOME "
           f"HOME={shlex.quote(str(home))} {command}")  # fmt: skip
    p.send("Enter")


def _turn(p: Pane) -> bool:
    """Draw, then discard (the next card where one is refused); True once the turn is done."""
    screen = p.screen()
    lines = screen.splitlines()
    if "your turn" not in lines[1]:
        return False
    if "d draw" in lines[-1]:
        p.type("d")
        p.wait_for(lambda s: "d draw" not in s.splitlines()[-1], "the draw")
        return False
    p.type("x")
    try:
        p.wait_for(lambda s: "your turn" not in s.splitlines()[1], "the discard", 10)
    except AssertionError:
        p.send("Escape")
        p.send("Right")
        return False
    return True


@dataclass
class Table:
    """Two terminals at one table, a turn played: who moved, and each one's name."""

    host: Pane
    joiner: Pane
    mover: Pane
    host_name: str
    joiner_name: str

    @property
    def mover_name(self) -> str:
        return self.host_name if self.mover is self.host else self.joiner_name


def _form_a_table_and_play_a_turn(a: Pane, b: Pane, home: Path) -> Table:
    """The host in `a`, the joiner in `b`, both with HOME `home` and no options: the joiner
    takes a self of its own and says so in one line, the two sit, and the first to move plays
    a turn that the other's feed tells."""
    _run(a, home, "buraco-p2p host --players 2")
    lobby = a.wait_for(lambda s: "Seats 1/2" in s, "the host's lobby", SETUP)
    invites = list((home / ".local/share/buraco-p2p/invites").glob("*.txt"))
    assert len(invites) == 1, invites
    _run(b, home, f"buraco-p2p join {invites[0].read_text().strip()}")
    a.wait_for(lambda s: "asks to join" in s, "the join request", SETUP)
    joined = b.wait_for(lambda s: "self 2" in s, "the joiner's line about its self")
    first, second = FINGERPRINT.search(lobby), FINGERPRINT.search(joined)
    assert first is not None and second is not None, (lobby, joined)
    assert first.group(2) != second.group(2), "the joiner took the host's identity"
    assert second.group(1) == f"{first.group(1)}-2"
    note = [line for line in joined.splitlines() if "self 2" in line]
    assert len(note) == 1, joined  # one line says it
    for _ in range(20):  # a y counts once the prompt has been on screen a moment
        a.type("y")
        try:
            a.wait_for(lambda s: "Seats 2/2" in s, "the joiner seated", 3)
            break
        except AssertionError:
            continue
    b.wait_for(lambda s: "seated" in s, "the joiner seated", SETUP)
    a.type("r")
    b.type("r")
    for p in (a, b):
        p.wait_for(lambda s: " Hand " in s and "dealt by" in s, "the deal", SETUP)
    mover, other = (a, b) if "your turn" in a.screen().splitlines()[1] else (b, a)
    name = (first if mover is a else second).group(1)
    done = False
    for _ in range(40):
        done = _turn(mover)
        if done:
            break
    assert done, mover.screen()
    other.wait_for(lambda s: f"{name} discarded " in s, "the move told to the other", 60)
    return Table(a, b, mover, first.group(1), second.group(1))


def test_a_host_and_a_joiner_in_two_terminals_of_one_machine_play_a_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    a, b = Pane(), Pane()
    try:
        _form_a_table_and_play_a_turn(a, b, home)
    finally:
        a.close()
        b.close()


@pytest.mark.slow
def test_the_joiner_on_one_machine_quits_and_comes_back_as_itself(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    a, b = Pane(), Pane()
    try:
        table = _form_a_table_and_play_a_turn(a, b, home)
        mover, name = table.mover, table.mover_name
        # The joiner quits: its terminal says how to come back; the host's feed says it left,
        # with the table's limit.
        b.type("q")
        b.wait_for(lambda s: "Quit the match?" in s, "the quit question")
        b.type("y")
        left = b.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", SETUP)
        said = left.splitlines()
        at = next(i for i, line in enumerate(said) if "come back with:" in line)
        again = said[at + 1].strip()
        assert again.startswith("buraco-p2p resume ") or " resume " in again, left
        joiner = table.joiner_name
        a.wait_for(lambda s: f"{joiner} left the table" in s, "the host told the joiner left",
                   60)  # fmt: skip
        # It comes back with the printed command, as itself: the hand in play is told again
        # from its deal, and the host's feed says it is back.
        _run(b, home, again)
        moved = "you" if mover is b else name
        back = b.wait_for(lambda s: " Hand " in s and f"{moved} discarded " in s,
                          "the resumed table, told from the deal", SETUP)  # fmt: skip
        told = [line.strip() for line in back.splitlines()]
        dealt = next(i for i, line in enumerate(told) if line.startswith("hand 1 dealt by "))
        assert dealt < told.index(next(x for x in told if x.startswith(f"{moved} discarded ")))
        assert not any(x.startswith("shuffle ") for x in told[dealt:]), back
        assert FINGERPRINT.search(back) is None  # the table, not a lobby
        a.wait_for(lambda s: f"{joiner} is back at the table" in s, "the host told it is back",
                   SETUP)  # fmt: skip
        for p in (a, b):
            p.type("q")
            p.wait_for(lambda s: "Quit the match?" in s, "the quit question")
            p.type("y")
            p.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", SETUP)
    finally:
        a.close()
        b.close()
