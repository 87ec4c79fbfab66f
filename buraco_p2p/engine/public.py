"""The public part of a hand's state as plain data, and its hash.

This is what every view must agree on after the same log, byte for byte (protocol/vectors/
pins it, and peers compare hashes), so it lives apart from the rules of play: a change here
is a change to the protocol, and shows as one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence, Set
from typing import Protocol

import msgpack

from buraco_p2p.engine.oracle import MeldOracle
from buraco_p2p.engine.values import EndReason, HandSetup, Phase, SideChange, TableMeld


class PublicHand(Protocol):
    """What the public state is made of: the parts of a hand every view knows alike.

    `state.HandBase` is one; naming only these members here keeps this module below the
    rules of play, and shows in one place what a change to the public state would touch.
    """

    # fmt: off
    @property
    def setup(self) -> HandSetup: ...
    @property
    def oracle(self) -> MeldOracle: ...
    @property
    def public(self) -> Set[int]: ...
    @property
    def known(self) -> Sequence[int]: ...
    @property
    def melds(self) -> Sequence[Sequence[TableMeld]]: ...
    @property
    def opening(self) -> Sequence[TableMeld]: ...
    @property
    def turn(self) -> int: ...
    @property
    def phase(self) -> Phase: ...
    @property
    def turns_played(self) -> int: ...
    @property
    def hands(self) -> Sequence[Sequence[int]]: ...
    @property
    def stock(self) -> Sequence[int]: ...
    @property
    def pile(self) -> Sequence[int]: ...
    @property
    def pot_owner(self) -> Sequence[int]: ...
    @property
    def team_pot(self) -> Sequence[int]: ...
    @property
    def pot_played(self) -> Sequence[bool]: ...
    @property
    def opened(self) -> Sequence[bool]: ...
    @property
    def failed(self) -> Sequence[int]: ...
    @property
    def first_slot(self) -> int: ...
    @property
    def taken_single(self) -> int: ...
    @property
    def must_meld(self) -> int: ...
    @property
    def last_turn(self) -> bool: ...
    @property
    def end_reason(self) -> EndReason | None: ...
    @property
    def went_out(self) -> int: ...
    @property
    def sides(self) -> Sequence[Sequence[int]]: ...
    @property
    def side_change(self) -> SideChange | None: ...
    # fmt: on


def public_state(h: PublicHand) -> list[object]:
    """The public part of the state as plain data (what `state_hash` hashes)."""
    s = h.setup
    pub = sorted(h.public)
    melds = [[[list(tm.slots), h.oracle.summary(tm.meld)] for tm in team] for team in h.melds]
    return [
        1,
        h.oracle.rules_digest,
        [s.dealer, list(s.team_scores), -1 if s.cut is None else s.cut, s.hand_number],
        h.turn,
        h.phase.value,
        h.turns_played,
        [list(hand) for hand in h.hands],
        list(h.stock),
        list(h.pile),
        list(h.pot_owner),
        list(h.team_pot),
        list(h.pot_played),
        melds,
        list(h.opened),
        list(h.failed),
        [[p, h.known[p]] for p in pub],
        [h.first_slot, h.taken_single, h.must_meld, h.last_turn],
        [h.end_reason.value if h.end_reason else "", h.went_out],
        [[list(tm.slots), h.oracle.summary(tm.meld)] for tm in h.opening],
        [list(side) for side in h.sides],
        [] if (c := h.side_change) is None else [c.solo, list(c.partners), c.turn],
    ]


def state_hash(h: PublicHand) -> bytes:
    """SHA-256 of the public state: equal on every view after the same moves and reveals."""
    data = msgpack.packb(public_state(h), use_bin_type=True)
    return hashlib.sha256(data).digest()
