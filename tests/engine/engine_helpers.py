"""Builders for engine tests: decks with chosen cards in chosen places, and move shortcuts."""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping

from buraco_p2p.cards import face_of, parse_cards
from buraco_p2p.engine import (
    AddToMeld,
    Discard,
    DrawStock,
    HandSetup,
    HandState,
    LayDown,
    LocalTable,
    Move,
    deal_layout,
    legal_moves,
    play_order,
)
from buraco_p2p.rules import Direction, RuleSet, get_preset


def build_perm(
    rules: RuleSet,
    dealer: int,
    hands: Mapping[int, str] | None = None,
    stock: str = "",
    face_up: str | None = None,
    pots: tuple[str, ...] = (),
) -> list[int]:
    """A permutation with the given faces at the front of each place, the rest in id order.

    `hands[seat]` lists that seat's first cards; `stock` the first cards drawn from the stock.
    """
    layout = deal_layout(rules)
    order = play_order(dealer, rules.play_direction is Direction.CLOCKWISE, rules.players)
    perm = [-1] * rules.deck_size
    used: set[int] = set()

    def take(text: str, slots: tuple[int, ...]) -> None:
        faces = parse_cards(text)
        assert len(faces) <= len(slots), "too many cards for this place"
        for face, slot in zip(faces, slots, strict=False):
            cid = next(
                i
                for i in range(rules.deck_size)
                if i not in used and face_of(i, rules.deck_size) == face
            )
            used.add(cid)
            perm[slot] = cid

    for seat, text in (hands or {}).items():
        take(text, layout.hands[order.index(seat)])
    take(stock, layout.stock)
    if face_up is not None:
        assert layout.face_up is not None
        take(face_up, (layout.face_up,))
    for i, text in enumerate(pots):
        if text:
            take(text, layout.pots[i])
    rest = iter(i for i in range(rules.deck_size) if i not in used)
    return [c if c >= 0 else next(rest) for c in perm]


def table_for(
    preset: str | RuleSet,
    dealer: int = 0,
    scores: tuple[int, ...] = (),
    cut: int | None = None,
    **places: object,
) -> LocalTable:
    rules = get_preset(preset) if isinstance(preset, str) else preset
    perm = build_perm(rules, dealer, **places)  # type: ignore[arg-type]
    return LocalTable(HandSetup(rules, dealer, scores, cut), perm)


def slots_of(
    view: HandState, seat: int, text: str, exclude: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """Slots in `seat`'s hand holding these faces (distinct slots for repeated faces)."""
    out: list[int] = []
    for face in parse_cards(text):
        s = next(
            s
            for s in view.hands[seat]
            if s not in out and s not in exclude and face_of(view.known[s], view.n) == face
        )
        out.append(s)
    return tuple(out)


def lay(t: LocalTable, seat: int, *melds: str) -> None:
    ref = t.referee
    used: tuple[int, ...] = ()
    out = []
    for m in melds:
        slots = slots_of(ref, seat, m, used)
        used += slots
        out.append(slots)
    t.push(LayDown(seat, tuple(out)))


def add(t: LocalTable, seat: int, meld: int, text: str) -> None:
    t.push(AddToMeld(seat, meld, slots_of(t.referee, seat, text)))


def discard(t: LocalTable, seat: int, text: str) -> None:
    t.push(Discard(seat, slots_of(t.referee, seat, text)[0]))


def draw(t: LocalTable) -> int:
    """The player to move draws from the stock; returns their seat."""
    seat = t.referee.turn
    t.push(DrawStock(seat))
    return seat


def snapshot(view: HandState) -> dict[str, object]:
    """A deep copy of every attribute, to prove a rejected move changed nothing."""
    skip = {"oracle", "rules", "setup", "params", "layout"}
    return {k: copy.deepcopy(v) for k, v in vars(view).items() if k not in skip}


def random_hand(t: LocalTable, rng: random.Random, meld_bias: float = 0.7) -> list[Move]:
    """Play a hand to its end with random legal moves, preferring melds."""
    while not t.ended:
        seat = t.referee.turn
        moves = legal_moves(t.views[seat])
        assert moves, f"player {seat} has no legal move in phase {t.referee.phase}"
        melds = [m for m in moves if isinstance(m, LayDown | AddToMeld)]
        move = rng.choice(melds) if melds and rng.random() < meld_bias else rng.choice(moves)
        t.push(move)
    return list(t.referee.moves)
