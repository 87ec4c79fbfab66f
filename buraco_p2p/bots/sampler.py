"""Deals of the hidden cards consistent with what one seat knows, for a searching player.

A seat knows the cards of its own hand and every card shown to the table: the face-up card,
discards, melds, failed openings, fechado's justifications and so the cards the others took
with the pile, which stay known in their hands. `Sampler` reads exactly that from a view
(`seat_knowledge`: a slot's card where it is public or in the seat's own hand, else unknown,
whatever else the view may hold) and deals the other cards at random to the slots it does not
know, so every sampled deal agrees with every public fact and with the seat's hand.

What the others did says more, softly: a player who drew from the stock when the pile's top
card would have made a meld with two cards of their hand probably did not hold those two
cards then (a player taking every pile whose top goes down, as the levels do, would have
taken it). A deal that gives a player such a pair, among the cards they held at their latest
refusal, is dealt again, up to `REDEALS` times, so the refusals shape the deals without ever
making one impossible (a person may refuse a pile for reasons of their own).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from buraco_p2p.bots.shapes import HandCounts, is_wild
from buraco_p2p.engine import (
    Discard,
    DrawStock,
    HandState,
    RefereeView,
    TakeDiscard,
    TurnUpFirst,
)

# How many times a deal that contradicts a refusal is dealt again before it is kept.
REDEALS: Final = 6


def seat_knowledge(view: HandState, seat: int) -> list[int]:
    """The card of each slot as `seat` knows it (-1: unknown): public slots and its own hand.

    A referee view holds every card; reading through this keeps a search to one seat's
    knowledge whatever view it is given."""
    known = view.known
    public = view.public
    where = view.where
    return [c if c >= 0 and (s in public or where[s] == seat) else -1 for s, c in enumerate(known)]


@dataclass(frozen=True, slots=True)
class Refusal:
    """A player drew from the stock with `top` (a face code) on the pile; `held` are the
    slots of their hand, unknown to us, that they already held then."""

    seat: int
    top: int
    held: tuple[int, ...]


class Sampler:
    """Deals consistent with `view` as seen by `seat` (by default the player to move)."""

    def __init__(self, view: HandState, seat: int | None = None) -> None:
        self.view = view
        self.seat = view.turn if seat is None else seat
        self.known = seat_knowledge(view, self.seat)
        seen = {c for c in self.known if c >= 0}
        self.unknown = [s for s, c in enumerate(self.known) if c < 0]
        self.unseen = [c for c in range(view.n) if c not in seen]
        self.refusals = refusals(view, self.seat, self.known)
        set_ranks = view.rules.set_ranks
        self._set_ok = [r in set_ranks for r in range(15)]

    def deal(self, rng: random.Random) -> RefereeView:
        """A referee view of this moment of the hand with the unknown cards dealt from `rng`."""
        perm = self._perm(rng)
        for _ in range(REDEALS):
            if self._plausible(perm):
                break
            perm = self._perm(rng)
        return self._referee(perm)

    def _perm(self, rng: random.Random) -> list[int]:
        cards = list(self.unseen)
        rng.shuffle(cards)
        perm = list(self.known)
        for s, c in zip(self.unknown, cards, strict=True):
            perm[s] = c
        return perm

    def _plausible(self, perm: Sequence[int]) -> bool:
        codes = self.view.codes
        for r in self.refusals:
            held = HandCounts(codes[perm[s]] for s in r.held)
            if held.completes_meld(r.top, self._set_ok[r.top % 13 + 1]):
                return False
        return True

    def _referee(self, perm: list[int]) -> RefereeView:
        new = self.view.copy()
        new.known = perm
        new.slot_of = {c: s for s, c in enumerate(perm)}
        new.viewer = None
        new.__class__ = RefereeView
        assert isinstance(new, RefereeView)
        return new


def refusals(view: HandState, seat: int, known: Sequence[int]) -> list[Refusal]:
    """Each other player's latest refusal of a natural top card (see the module doc), with
    the unknown slots of their hand they held at the time."""
    face_up = view.layout.face_up
    top = face_up if face_up is not None else -1
    latest: dict[int, tuple[int, int]] = {}  # seat -> (top slot, move index)
    draws_after: dict[int, int] = {}  # seat -> stock cards drawn since (that draw included)
    first_draw = -1
    for i, m in enumerate(view.moves):
        if isinstance(m, Discard):
            top = m.slot
        elif isinstance(m, TakeDiscard):
            top = -1
            latest.pop(m.seat, None)
        elif isinstance(m, DrawStock):
            if first_draw < 0:
                first_draw = i
            if m.seat in latest:
                draws_after[m.seat] += 1
            if top >= 0 and m.seat != seat:
                latest[m.seat] = (top, i)
                draws_after[m.seat] = 1
        elif isinstance(m, TurnUpFirst):
            # the first card drawn goes to the pile and the next is drawn instead
            if m.seat in latest:
                draws_after[m.seat] += 1
            top = view.layout.stock[0]
    out: list[Refusal] = []
    codes = view.codes
    pots = {s for pot in view.layout.pots for s in pot}
    for who, (slot, _) in latest.items():
        c = known[slot]
        if c < 0 or is_wild(codes[c]) or view.seat_side[who] == view.seat_side[seat]:
            continue
        # Cards drawn from the stock are appended to a hand, so its unknown slots are in the
        # order they came; the last `draws_after` came after the refusal. Pot cards are
        # left out: when the pot came is not in the log.
        hidden = [s for s in view.hands[who] if known[s] < 0 and s not in pots]
        cut = len(hidden) - draws_after[who]
        if cut > 0:
            out.append(Refusal(who, codes[c], tuple(hidden[:cut])))
    return out
