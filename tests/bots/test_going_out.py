"""Going out when the side is ahead, keeping the hand when it is behind, from a table built
card by card: the normal level's player has just taken its pot with a clean buraco on the
table and holds cards that go out this turn. Ahead, it goes out; with the opponents far ahead
on the table (two buracos, and no pot of theirs taken, so they cannot end the hand soon), it
plays on and keeps a card."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from buraco_p2p.bots import NormalBot
from buraco_p2p.cards import face_of, parse_cards
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    EndReason,
    HandSetup,
    LayDown,
    LocalTable,
    deal_layout,
    play_order,
)
from buraco_p2p.rules import Direction, RuleSet, get_preset

# Seat 0's hand (a clean spade run of seven and four hearts), the stock's first cards (the
# fourth, 9H, is seat 0's draw) and both pots: two runs of five and a 10S for the buraco.
BURACO = "3S 4S 5S 6S 7S 8S 9S"
HEARTS = "5H 6H 7H 8H"
STOCK = "2H 5S 6S 9H"
POT = "3D 4D 5D 6D 7D 3C 4C 5C 6C 7C 10S"
# What each opponent lays down before seat 0's turn when the side is behind: a clean buraco
# of high cards and a set, and the card they throw.
OPPONENTS = {
    1: (("8C 9C 10C JC QC KC AC", "JH JH JS"), "3H"),
    3: (("8D 9D 10D JD QD KD AD", "QH QH QS"), "4H"),
}


def deck(rules: RuleSet, dealer: int, hands: Mapping[int, str], pots: tuple[str, ...]) -> list[int]:
    """A permutation with these faces first in these hands, the stock and the pots."""
    layout = deal_layout(rules)
    order = play_order(dealer, rules.play_direction is Direction.CLOCKWISE, rules.players)
    perm = [-1] * rules.deck_size
    free = list(range(rules.deck_size))

    def put(text: str, slots: tuple[int, ...]) -> None:
        for face, slot in zip(parse_cards(text), slots, strict=False):
            card = next(i for i in free if face_of(i, rules.deck_size) == face)
            free.remove(card)
            perm[slot] = card

    for seat, text in hands.items():
        put(text, layout.hands[order.index(seat)])
    put(STOCK, layout.stock)
    for slots, text in zip(layout.pots, pots, strict=True):
        put(text, slots)
    rest = iter(free)
    return [c if c >= 0 else next(rest) for c in perm]


def slots_of(table: LocalTable, seat: int, text: str) -> tuple[int, ...]:
    ref = table.referee
    out: list[int] = []
    for face in parse_cards(text):
        mine = (s for s in ref.hands[seat] if s not in out)
        out.append(next(s for s in mine if face_of(ref.known[s], ref.n) == face))
    return tuple(out)


def table_after_the_pot(behind: bool) -> LocalTable:
    """Us rules at four, seat 1 first: seats 1, 2 and 3 draw and discard (the opponents
    laying down their buracos first when `behind`), then seat 0 draws and lays its whole hand
    down, which takes its pot in flight."""
    rules = get_preset("us")
    hands = {0: f"{BURACO} {HEARTS}"}
    for seat, (melds, card) in OPPONENTS.items():
        hands[seat] = " ".join([*melds, card]) if behind else card
    table = LocalTable(HandSetup(rules, 0, (0, 0)), deck(rules, 0, hands, (POT, POT)))
    for seat in (1, 2, 3):
        assert table.referee.turn == seat
        table.push(DrawStock(seat))
        if seat in OPPONENTS:
            melds, card = OPPONENTS[seat]
            if behind:
                table.push(LayDown(seat, tuple(slots_of(table, seat, m) for m in melds)))
            table.push(Discard(seat, slots_of(table, seat, card)[0]))
        else:
            table.push(Discard(seat, table.referee.hands[seat][0]))
    table.push(DrawStock(0))
    table.push(LayDown(0, (slots_of(table, 0, BURACO), slots_of(table, 0, f"{HEARTS} 9H"))))
    ref = table.referee
    assert ref.team_pot[0] >= 0 and ref.team_pot[1] < 0 and len(ref.hands[0]) == 11
    assert len(ref.melds[1]) == (4 if behind else 0)
    return table


def going_out_is_open(table: LocalTable) -> bool:
    """Whether seat 0 can go out this turn: the two runs laid down, the 10S onto the buraco."""
    ref = table.referee.copy()
    runs = (slots_of(table, 0, "3D 4D 5D 6D 7D"), slots_of(table, 0, "3C 4C 5C 6C 7C"))
    for slots in runs:
        ref.push(LayDown(0, (slots,)))
    ref.push(AddToMeld(0, 0, slots_of(table, 0, "10S")))
    return ref.end_reason is EndReason.WENT_OUT


@pytest.mark.parametrize("behind", [False, True], ids=["ahead", "behind"])
def test_the_normal_level_goes_out_ahead_and_keeps_the_hand_behind(behind: bool) -> None:
    table = table_after_the_pot(behind)
    assert going_out_is_open(table)
    bot = NormalBot()
    rng = random.Random(0)
    while not table.ended and table.referee.turn == 0:
        move = bot.choose_move(table.views[0], rng)
        table.push(move)
        if isinstance(move, Discard):
            break
    ref = table.referee
    if behind:
        assert not ref.ended and ref.hands[0]  # it plays on, a card kept
    else:
        assert ref.ended and ref.end_reason is EndReason.WENT_OUT and ref.went_out == 0
