"""Each seat label says how the link to that peer was made, and "[offline]" only when down."""

from __future__ import annotations

import dataclasses

import pytest

from buraco_p2p.rules import get_preset
from buraco_p2p.ui import Client, PracticeTable, render
from tests.ui.ui_helpers import text_of

LINKS = ("", "relayed by the host", "direct (punched)", "direct (IPv6)", "mapped", "direct")


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_seat_labels_show_the_link_and_offline_only_when_down(players: int) -> None:
    rules = get_preset("classic").with_overrides({"players": players})
    snap = PracticeTable(rules, 1, bot_delay=0).snapshot()
    seats = tuple(
        dataclasses.replace(s, link=LINKS[s.seat], connected=s.seat != players - 1)
        for s in snap.seats
    )
    size = (100, 30) if players == 6 else (80, 24)
    all_up = (*seats[:-1], dataclasses.replace(seats[-1], connected=True))
    up = text_of(render(Client(dataclasses.replace(snap, seats=all_up), lambda m: None),
                        *size, 0.0))  # fmt: skip
    assert "[offline]" not in up
    assert "relayed" in up
    if players >= 3:
        assert "punched" in up
    down = text_of(render(Client(dataclasses.replace(snap, seats=seats), lambda m: None),
                          *size, 0.0))  # fmt: skip
    assert down.count("[offline]") == 1
