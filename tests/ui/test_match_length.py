"""A match by hands (or minutes) is told by where it stands, never by a target it ignores;
every screen puts this player's side first.

The engine ends a match by `hands` after the N-th hand, the side ahead winning: the target
score plays no part, so the header, the hand-end panel, the history and the rules page say
"hand 1 of 2" and "1 of 2 hands played", and none of them names the target.
"""

from __future__ import annotations

import dataclasses
import re

from ui_helpers import Sent, positions, snapshot_of, text_of

from buraco_p2p.rules import get_preset
from buraco_p2p.ui import Client, Panel, render

HANDS = dataclasses.replace(get_preset("us"), hands=2)


def screen(c: Client, cols: int = 80, rows: int = 24) -> str:
    return text_of(render(c, cols, rows, now=0.0))


def test_a_match_of_two_hands_says_hand_1_of_2_and_never_its_target() -> None:
    ended = None
    for table, match in positions(HANDS, seed=3, me=1):
        if table.ended:
            ended = (table, match)
            break
        if len(table.referee.moves) == 10:
            c = Client(snapshot_of(table, match, me=1), Sent())
            text = screen(c)
            status = text.splitlines()[1]
            assert "hand 1 of 2" in status, status
            assert str(HANDS.target_score) not in text and "target" not in text
            c.toggle_panel(Panel.RULES)
            rules = ""
            for _ in range(6):
                rules += screen(c)
                c.panel_page += 1
            assert "the match is 2 hands" in rules and "plays no part" in rules
    assert ended is not None
    table, match = ended
    result = table.result()
    match.record(result)
    snap = dataclasses.replace(snapshot_of(table, match, me=1), history=(result,))
    c = Client(snap, Sent())
    panel = screen(c)
    assert "1 of 2 hands played" in panel and "target" not in panel, panel
    c.close_panel()
    c.toggle_panel(Panel.HISTORY)
    history = screen(c)
    # Seat 1 plays on match side 1: "Us" is the first column, as in the header.
    head = next(line for line in history.splitlines() if line.startswith(" hand "))
    assert head.index("Us") < head.index("Them"), head
    us, them = result.match_points[1], result.match_points[0]
    row = next(line for line in history.splitlines() if line.startswith("    1 "))
    assert re.sub(r"=\s+", "=", row).split()[1:] == [f"{us:+d}", f"={us}", f"{them:+d}",
                                                  f"={them}"], row
    assert "1 of 2 hands played" in history and "target" not in history
