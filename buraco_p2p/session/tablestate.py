"""What the table's helpers see of the table: the `TableState` interface, and `VoidRecord`.

`Table` (`buraco_p2p.session.table`) is the log gate; three helpers do its work: `checks`
(each kind's content), `flow` (the next step) and `produce` (our own entries). They are handed
the table as a `TableState`, the members they read and set, named here with their contract,
never the `Table` class: so they sit below the table in the import graph (the table imports
them, none of them imports the table), and what a helper may touch is written in one place.
`Table` implements it; its own bookkeeping (the log gate's marks, roll-back, equivocation
stops) is not part of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from buraco_p2p.crypto.group import RandomSource
from buraco_p2p.crypto.proofcheck import ProofChecks
from buraco_p2p.crypto.randomness import CommitReveal
from buraco_p2p.engine import HandState, Match, Move
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.rules import RuleSet
from buraco_p2p.session.deal import Deal
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.errors import LogError
from buraco_p2p.session.states import Phase, Rule
from buraco_p2p.session.terms import Terms

__all__ = ["TableState", "VoidRecord"]


@dataclass(frozen=True, slots=True)
class VoidRecord:
    """One applied void round, as the log shows it to anyone: the index of its last entry,
    its action, the silent parties, the phase it interrupted and the hand (None before the
    seats), the stage (see `buraco_p2p.session.flow`), which silent parties a partner among
    the signers proves walked out (`proven`), the match sides charged and what each paid, and
    how the table went on: "next_hand", "closed" or "decided" (closed with the match's
    result)."""

    index: int
    action: str
    silent: tuple[int, ...]
    phase: str
    hand: int | None
    stage: str
    proven: tuple[int, ...]
    charged: tuple[int, ...]
    points: int
    then: str
    attempt: int = 0  # its try (4.5): above 0 it also names parties that did not sign a try
    held: tuple[int, ...] = ()  # silent parties the table was not waiting for (see `attempt`)


class TableState(Protocol):
    """One match's table as its helpers use it: the terms, the log, the step under way, the
    seats, the match and the hand, and this party's secrets (none for a verifier).

    `checks` reads it and records what an entry's content changes (the deck, the seat draw,
    a void's action); `flow` moves it to the next step; `produce` reads it to make our own
    bodies. None of them appends to the log: that is the table's.
    """

    terms: Terms  # the genesis's terms
    rules: RuleSet  # the match's rules (the terms')
    n: int  # the number of parties
    checks: ProofChecks  # who runs each hand's deck proof checks (verify --jobs)
    log: list[Entry]  # every entry applied, the genesis first

    # This party: its index (None for a verifier or an heir not yet seated) and its private
    # random source (nonces, hand keys, shuffles, proofs; None exactly when `me` is None).
    me: int | None
    rng: RandomSource | None
    # This party's nonce for the seat draw, made from `rng` when the table is made (None for a
    # verifier): committed to in the first round, revealed in the second.
    seat_nonce: bytes | None
    # An heir's identity key and random source, until a "replace" round seats it (`flow`).
    heir: tuple[bytes, RandomSource] | None

    phase: Phase  # the phase of the step under way
    authors: tuple[int, ...]  # the parties that append the step under way, in order
    fault: LogError | None  # the refusal that stopped the table, if one did

    seat_draw: CommitReveal  # the seat draw's commit-reveal
    seating: tuple[int, ...]  # the party at each seat
    party_seat: tuple[int, ...]  # each party's seat
    match: Match | None  # the match, once the seats are drawn
    hand: Deal | None  # the hand under way
    hands_played: int
    shuffles_verified: int
    opened: list[tuple[int, ...]]  # a verifier's: every finished hand's cards

    # Each party's identity key in force, and the "replace" rounds that changed one:
    # (log index, party, new key).
    keys: list[PeerKey]
    successions: list[tuple[int, int, PeerKey]]

    # A void round: its action once agreed ("pending" before), the silent parties, the keys
    # a "replace" names, and every round applied.
    voiding: str | None
    silent: tuple[int, ...]
    void_keys: tuple[bytes, ...]
    void_try: int
    void_held: tuple[int, ...]
    voids: list[VoidRecord]

    @property
    def rule(self) -> Rule:
        """The transition table's row for the step under way (the void rule in a void)."""
        ...

    @property
    def closed(self) -> bool:
        """Whether the log is closed."""
        ...

    @property
    def view(self) -> HandState | None:
        """The engine's view of the hand under way."""
        ...

    @property
    def my_seat(self) -> int | None:
        """This party's seat, once the seats are drawn (None for a verifier)."""
        ...

    def index_of(self, party: int) -> int | None:
        """The log index of `party`'s entry in the step under way, if it owes one."""
        ...

    def expected_author(self, index: int) -> int | None:
        """The party that appends the entry at log index `index` in the step under way."""
        ...

    def check_move(self, seat: int, move: Move) -> tuple[int, ...]:
        """Validate before reveal: what a move by `seat` must pass before any card of it is
        shown; returns the slots it shows."""
        ...
