"""The table's words, as a person reads them: an addition names the meld as it was, a wild
that moves and a buraco that turns clean are told, the hand's first card reads as one draw
(kept, or turned up for another), `t` before that draw says to draw first and the draw prompt
offers it, and a run missing cards never blames a wildcard it does not hold."""

from __future__ import annotations

import pytest
from ui_helpers import Sent, positions, snapshot_of, text_of

from buraco_p2p.cards import parse_cards
from buraco_p2p.engine import DrawStock, LocalTable, Match, Phase, TurnUpFirst
from buraco_p2p.rules import IllegalMeld, evaluate_meld, get_preset
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import tell_move
from buraco_p2p.ui import Client, render
from buraco_p2p.ui.keys import press

US = get_preset("us")


def _told_at(seed: int, moves: int) -> list[str]:
    """The lines of the move that brings the first hand of `us`, seed `seed`, to `moves`."""
    prev = None
    for table, _ in positions(US, seed):
        r = table.referee
        if len(r.moves) == moves and prev is not None:
            return tell_move(prev, r.moves[-1], r, lambda s: f"p{s}", Glyphs())
        prev = r.copy()
    raise AssertionError("the position is gone")


def test_an_addition_names_the_meld_as_it_was_and_its_wild_moving() -> None:
    lines = _told_at(1, 49)
    assert lines == ["p0 added K♥ J♥ to T♥ 2♣ Q♥", "the 2♣ moved: it stands for the A now"]


def test_a_buraco_that_turns_clean_is_told() -> None:
    lines = _told_at(7, 139)
    assert lines[1] == "p0's buraco turned clean: its 2♣ is a natural card now", lines


def _first(pred: object) -> tuple[LocalTable, Match]:
    for table, match in positions(US, 2):
        if pred(table):  # type: ignore[operator]
            return table, match
    raise AssertionError("no such position")


def test_the_hands_first_card_is_one_draw_kept_or_turned_up() -> None:
    table, match = _first(lambda t: t.referee.phase is Phase.DRAW and t.referee.turns_played == 0)
    seat = table.referee.turn
    before = table.views[seat].copy()
    c = Client(snapshot_of(table, match, me=seat), Sent())
    screen = text_of(render(c, 80, 24, 0.0))
    assert "Your turn: d draws the hand's first card: keep it, or t turns it up" in screen
    press(c, "t")
    assert c.message is not None and c.message.text.startswith("Draw first (d)")
    table.push(DrawStock(seat))
    after = table.views[seat]
    drew = tell_move(before, DrawStock(seat), after, lambda s: "you", Glyphs())
    assert drew[0].startswith("you drew 1 card from the stock: ")
    assert drew[0].endswith(", the hand's first (keep it, or t turns it up)")
    shown = after.copy()
    table.push(TurnUpFirst(seat))
    up = tell_move(shown, TurnUpFirst(seat), table.views[seat], lambda s: "Ana", Glyphs())
    assert up[0].startswith("Ana turned the first card up (") and "drew another" in up[0]


def test_t_after_the_first_turn_says_only_the_first_card_turns_up() -> None:
    table, match = _first(lambda t: t.referee.phase is Phase.DRAW and t.referee.turns_played > 4)
    c = Client(snapshot_of(table, match, me=table.referee.turn), Sent())
    assert "draw: d the stock, p the pile" in text_of(render(c, 80, 24, 0.0))
    press(c, "t")
    assert c.message is not None and "Only the hand's first card" in c.message.text


@pytest.mark.parametrize(("cards", "words"), [
    ("3H 4H 7H", "is missing 5♥ 6♥"),
    ("3H 4H 6H", "is missing 5♥ (one wildcard can fill one gap)"),
])  # fmt: skip
def test_a_run_missing_cards_never_blames_a_wildcard_it_does_not_hold(
    cards: str, words: str
) -> None:
    with pytest.raises(IllegalMeld) as err:
        evaluate_meld(parse_cards(cards), US)
    text = str(err.value)
    assert "wildcard" not in text.split("(")[0] and "may hold only" not in text, text
    assert words.replace("♥", "H") in text or words in text, text


def test_added_never_says_meld_s() -> None:
    table, match = _first(lambda t: t.referee.phase is Phase.PLAY and t.referee.turn == 0)
    c = Client(snapshot_of(table, match), Sent())
    c.selected = [c.hand()[0]]
    c.stage()
    assert c.message is not None and "1 meld grouped" in c.message.text
