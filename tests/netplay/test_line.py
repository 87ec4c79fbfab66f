"""The line-mode table: typed commands become moves on the sorted hand; the text shows it."""

from __future__ import annotations

import random

import pytest

from buraco_p2p.cards import face_of
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandSetup,
    LayDown,
    LocalTable,
    TakeDiscard,
)
from buraco_p2p.play.line import LineError, parse_command, render, sorted_hand
from buraco_p2p.rules import get_preset


def _view(players: int = 4):  # type: ignore[no-untyped-def]
    rules = get_preset("classic")
    if players != 4:
        rules = rules.with_overrides({"players": players})
    from buraco_p2p.engine import match_sides

    setup = HandSetup(rules, 0, (0,) * match_sides(rules), None, 0)
    table = LocalTable.shuffled(setup, random.Random(4))
    return table.views[table.views[0].turn]


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_the_hand_is_sorted_by_suit_then_rank(players: int) -> None:
    view = _view(players)
    seat = view.turn
    hand = sorted_hand(view, seat)
    faces = [face_of(view.card(s) or 0, view.n) for s in hand]
    keys = [(4 if f.suit is None else int(f.suit), f.rank) for f in faces]
    assert keys == sorted(keys) and sorted(hand) == sorted(view.hand(seat))
    text = render(view, seat, [f"p{i}" for i in range(players)])
    assert f"your hand ({len(hand)}): 1:{faces[0]}" in text
    assert f"turn: p{seat}" in text


def test_commands_name_cards_by_their_number_in_the_sorted_hand() -> None:
    view = _view()
    seat = view.turn
    hand = sorted_hand(view, seat)
    assert parse_command("draw", view, seat) == DrawStock(seat)
    assert parse_command("take 1 2", view, seat) == TakeDiscard(seat, (hand[0], hand[1]))
    assert parse_command("discard 3", view, seat) == Discard(seat, hand[2])
    assert parse_command("meld 1 2 3 / 4 5 6", view, seat) == LayDown(
        seat, ((hand[0], hand[1], hand[2]), (hand[3], hand[4], hand[5]))
    )
    assert parse_command("add 1 7", view, seat) == AddToMeld(seat, 0, (hand[6],))
    name = render(view, seat, ["p"] * view.players).split(" 3:")[1].split()[0]
    assert parse_command(f"discard {name.lower()}", view, seat) == Discard(seat, hand[2])
    for bad in ("discard 99", "discard x", "meld 1 1 2", "fly", "add x 1", "add 0 1", "",
                "discard QQ"):
        with pytest.raises(LineError):
            parse_command(bad, view, seat)
