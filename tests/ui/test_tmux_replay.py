"""`buraco-p2p replay` in a real terminal: tmux at 80x24 opens a two-hand log that `selfplay`
wrote, keys are typed and the pane is read back.

The words each seat's feed gave at the table come from playing the same match again and
following every party's own view with the narrator as the table does (`tests/replay/
replay_helpers.py`); `verify` is run as a command to know what it says of each log.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_tmux import TMUX, Pane, pane  # noqa: F401 - the fixture

from buraco_p2p.text.glyphs import Glyphs
from tests.replay.replay_helpers import live_match, selfplay_args
from tests.replay.test_voids import walked_out_mid_hand

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

BIN = Path(sys.executable).parent / "buraco-p2p"
PARTY = 1  # the player whose view is replayed


@pytest.fixture(scope="module")
def match_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "match.log"
    subprocess.run([str(BIN), *selfplay_args(str(path))], check=True, capture_output=True,
                   timeout=300)  # fmt: skip
    assert path.read_bytes() == live_match().log
    return path


def verify(path: Path) -> tuple[int, dict[str, object], str]:
    """`verify --json` and `verify` on the log: the exit code, the document, the text."""
    doc = subprocess.run([str(BIN), "verify", "--json", str(path)], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    text = subprocess.run([str(BIN), "verify", str(path)], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    return doc.returncode, json.loads(doc.stdout), text.stdout


def flat_text(screen: str) -> str:
    """The screen's lines joined, so a sentence wrapped over two lines reads whole."""
    return " ".join(line.strip() for line in screen.splitlines())


def open_replay(p: Pane, *args: str) -> None:
    p.type(f"buraco-p2p replay {' '.join(args)}")
    p.send("Enter")


def quit_replay(p: Pane) -> str:
    p.type("q")
    return p.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting")


def title(screen: str) -> str:
    return screen.splitlines()[0]


def checked(screen: str) -> bool:
    """`verify` has finished with the log (the title no longer counts the entries checked)."""
    return "checking" not in title(screen)


CHECKING = re.compile(r"checking (\d+)/\d+")


def wait_checking(p: Pane, pred: Callable[[str], bool], what: str) -> str:
    """Wait for `pred` for as long as the replay's check of the log moves on. A hand, the
    story or a bad entry is shown once `verify` has checked the entries before it, which a
    machine under load does slowly: only a count that stands still for the pane's whole
    limit is a failure."""

    def count(screen: str) -> str | None:
        found = CHECKING.search(title(screen))
        return found.group(1) if found else None

    def shown_or_moved(since: str | None) -> Callable[[str], bool]:
        return lambda s: pred(s) or count(s) != since

    seen = count(p.screen())
    while True:
        screen = p.wait_for(shown_or_moved(seen), f"{what} (the check standing at {seen})")
        if pred(screen):
            return screen
        seen = count(screen)


def test_the_first_screen_is_the_deal_then_move_by_move_as_the_feed_said(
    pane: Pane, match_log: Path  # noqa: F811
) -> None:
    live = live_match()
    seat = live.seating.index(PARTY)
    nick = live.nicknames[PARTY]
    open_replay(pane, "--seat", str(seat), str(match_log))
    first = pane.wait_for(lambda s: "the deal" in title(s), "the first deal")
    lines = first.splitlines()
    assert len(lines) == 24 and "hand 1 · the deal" in lines[0] and f"as {nick} saw it" in lines[0]
    assert any(line.startswith(" hand 1 dealt by ") for line in lines)
    # the hand this player was dealt at the table, card for card
    g = Glyphs()
    row = next(line for line in lines if line.startswith(" Hand 11 "))
    assert sorted(row.split()[2:]) == sorted(g.card(c) for c in live.dealt[PARTY][0])

    for _ in range(10):
        pane.send("Right")
    tenth = wait_checking(pane, lambda s: "move 10/" in title(s) and checked(s), "the tenth move")
    # The table's feed, the rows under the pile the melds leave: the last lines said after
    # the tenth move at this player's table (a line too long for the row cut and marked, as
    # the table does).
    said = [line for move in live.feeds[PARTY][:10] for line in move]
    assert live.feeds[PARTY][9], "the tenth move said something at the table"
    lines = tenth.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith(" Stock "))
    end = next(i for i, x in enumerate(lines) if x.startswith(" Hand "))
    feed = [x.strip() for x in lines[at + 1 : end] if x.strip()]
    assert len(feed) >= 3
    assert feed == [x if len(x) <= 78 else x[:78] + "…" for x in said[-len(feed) :]]
    assert feed[-1].startswith(live.feeds[PARTY][9][-1][:78])

    pane.send("Right")
    pane.wait_for(lambda s: "move 11/" in title(s), "the eleventh move")
    pane.send("Left")
    back = pane.wait_for(lambda s: "move 10/" in title(s), "back to the tenth move")
    assert back == tenth
    quit_replay(pane)


def test_the_score_story_ends_with_the_final_totals(
    pane: Pane, match_log: Path  # noqa: F811
) -> None:
    code, doc, _text = verify(match_log)
    assert code == 0
    scores = doc["scores"]
    assert isinstance(scores, list)
    open_replay(pane, str(match_log))
    wait_checking(pane, lambda s: "the deal" in title(s) and checked(s), "the first deal, checked")
    pane.send("End")
    story = wait_checking(pane, lambda s: "The score's story: the match is over" in s, "the story")
    rows = [line for line in story.splitlines() if re.search(r"\d+ melds?", line)]
    last = rows[-len(scores) :]
    totals = [int(re.findall(r"(-?\d+)  \d+ melds?", row)[0]) for row in last]
    assert totals == scores
    bars = [row.count("█") for row in last]
    winner = scores.index(max(scores))
    assert bars[winner] == max(bars) > 0  # the longest bar is the winner's
    players = doc["players"]
    assert isinstance(players, list)
    by_seat = {p["seat"]: p["nickname"] for p in players}
    names = [next(w for w in row.split() if "+" in w[1:]) for row in last]
    assert names[0] == f"{by_seat[0]}+{by_seat[2]}"  # side 0: seats 0 and 2
    assert "verify: fair match: match.log" in story
    quit_replay(pane)


def test_ascii_and_a_chosen_hand(pane: Pane, match_log: Path) -> None:  # noqa: F811
    open_replay(pane, "--ascii", "--hand", "2", str(match_log))
    screen = wait_checking(pane, lambda s: "hand 2 - the deal" in title(s), "the second deal")
    assert not set("♠♥♦♣█·…") & set(screen)
    assert re.search(r"\b[2-9TJQKA][SHDC]\b", screen)
    pane.send("End")
    story = wait_checking(pane, lambda s: "The score's story" in s, "the story in ASCII")
    assert "#" in story and not set("█▏▎▍▌▋▊▉♠♥♦♣") & set(story)
    quit_replay(pane)


def test_a_byte_flipped_log_stops_at_the_entry_verify_names(
    pane: Pane, match_log: Path, tmp_path: Path  # noqa: F811
) -> None:
    data = bytearray(match_log.read_bytes())
    at = len(data) * 4 // 10
    data[at] ^= 0x10
    bad = tmp_path / "flipped.log"
    bad.write_bytes(bytes(data))
    code, doc, text = verify(bad)
    assert code == 1 and doc["result"] == "bad_entry"
    index = doc["index"]
    said = text.splitlines()[0]
    open_replay(pane, str(bad))
    pane.send("End")
    end = wait_checking(pane, lambda s: f"BAD LOG at entry {index}" in title(s)
                        and f"verify: {said}" in flat_text(s),
                        "the end of what verify accepts")  # fmt: skip
    assert "story" in end
    pane.send("Left")
    # The terminal is redrawn a line at a time: wait for the whole frame, not its first line.
    stop = pane.wait_for(lambda s: f"cut short at entry {index}" in flat_text(s)
                         and "public record" in title(s),
                         "the deal the bad entry cuts short")  # fmt: skip
    assert "The score's story" not in stop
    quit_replay(pane)


def test_a_hand_abandoned_in_play_is_shown_from_the_public_record(
    pane: Pane, tmp_path: Path  # noqa: F811
) -> None:
    log = tmp_path / "walked.log"
    log.write_bytes(walked_out_mid_hand())
    open_replay(pane, str(log))
    abandoned = "Hand 1 was abandoned before its keys were opened"
    first = pane.wait_for(lambda s: "the deal" in title(s) and abandoned in s, "the deal")
    assert "public record" in title(first)
    assert "??" in first  # nobody's hidden cards
    pane.send("End")
    pane.wait_for(lambda s: "the end" in title(s), "the end")
    pane.send("Left")
    pane.send("Left")
    stop = pane.wait_for(lambda s: "hand 1 · stops here" in title(s), "where hand 1 stops")
    assert "public record" in title(stop) and "walked out of hand 1" in stop
    quit_replay(pane)


@pytest.mark.parametrize("what", ["truncated", "foreign", "missing"])
def test_a_file_that_is_no_log_is_one_line_and_exit_2(
    what: str, pane: Pane, match_log: Path, tmp_path: Path  # noqa: F811
) -> None:
    path = tmp_path / f"{what}.log"
    if what == "truncated":
        path.write_bytes(match_log.read_bytes()[:-100])
    elif what == "foreign":
        path.write_text("these are not the cards you are looking for\n")
    pane.type(f"cd {tmp_path}; clear")
    pane.send("Enter")
    pane.wait_for(lambda s: s.strip() == "$", "a clear screen")
    pane.type(f"buraco-p2p replay {path.name} 2>said.txt; echo rc=$?")
    pane.send("Enter")
    screen = pane.wait_for(lambda s: any(x.startswith("rc=") for x in s.splitlines()),
                           "the command's end")  # fmt: skip
    assert "rc=2" in screen.splitlines()
    said = (tmp_path / "said.txt").read_text()
    assert said.count("\n") == 1, said
    assert said.startswith(f"buraco-p2p replay: not a match log: {path.name}: "), said
    assert "Traceback" not in screen
