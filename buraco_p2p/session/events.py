"""What the session tells its host (a UI, a bot driver, a network loop): frozen values."""

from __future__ import annotations

from dataclasses import dataclass

from buraco_p2p.engine import HandResult, Move
from buraco_p2p.session.errors import LogError

__all__ = [
    "Abandoned",
    "CardSeen",
    "Event",
    "Fault",
    "HandEnded",
    "HandStarted",
    "MatchEnded",
    "MoveApplied",
    "Refused",
    "Rewrite",
    "SeatsDrawn",
    "TimeUp",
    "TimedOut",
    "VoidHeld",
    "VoidProposed",
    "Voided",
    "YourTurn",
]


@dataclass(frozen=True, slots=True)
class SeatsDrawn:
    """The joint draw's outcome: `seating[s]` is the party at seat s; the first dealer's seat."""

    seating: tuple[int, ...]
    dealer: int


@dataclass(frozen=True, slots=True)
class HandStarted:
    """The deal is complete and the first move possible (`hand` counts deals from 0)."""

    hand: int
    dealer: int
    cut: int


@dataclass(frozen=True, slots=True)
class CardSeen:
    """A card this peer alone has learned (its own hand)."""

    slot: int
    card: int


@dataclass(frozen=True, slots=True)
class MoveApplied:
    seat: int
    move: Move


@dataclass(frozen=True, slots=True)
class YourTurn:
    """This peer's seat is on turn: the host answers with `Peer.play(move)`."""

    seat: int


@dataclass(frozen=True, slots=True)
class HandEnded:
    result: HandResult


@dataclass(frozen=True, slots=True)
class MatchEnded:
    scores: tuple[int, ...]
    winner: int | None


@dataclass(frozen=True, slots=True)
class TimedOut:
    """The table has waited longer than its limit for these parties' entries."""

    parties: tuple[int, ...]
    waited: float


@dataclass(frozen=True, slots=True)
class VoidHeld:
    """The void round we signed has waited past the table's timeout for `parties`, which
    have not signed it (4.5, retries). `outcome`: "retry" (we signed the next try, naming
    them too), "lower" (we hold a complete round of a lower try there: it is applied), or
    "held" (a round naming them would leave no majority to sign it: we wait, and name
    nobody)."""

    parties: tuple[int, ...]
    outcome: str
    attempt: int


@dataclass(frozen=True, slots=True)
class TimeUp:
    """The time of a match with a time limit is up, as the round of clocks after the hand
    just finished agreed (`clocks`: each party's reading in milliseconds, by party): the
    match ends with that hand, or, while the lead is tied, with the next hand that breaks it."""

    hand: int
    clocks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Voided:
    """The present parties agreed to void the hand ("void") or end the match ("end")."""

    action: str
    silent: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Abandoned:
    """A void agreement after the deal that the log proves: `parties` (silent, each with a
    partner among the signers) walked out of hand `hand`, and each match side in `sides`
    was charged `points` (docs/rules.md, "Abandoning a hand")."""

    hand: int
    parties: tuple[int, ...]
    sides: tuple[int, ...]
    points: int


@dataclass(frozen=True, slots=True)
class VoidProposed:
    """Another present party signed a void agreement (`party`, its action, the parties it
    names silent); `Peer.join_void` adds ours."""

    party: int
    action: str
    silent: tuple[int, ...]
    keys: tuple[bytes, ...] = ()  # "replace": the new identity of each silent party


@dataclass(frozen=True, slots=True)
class Refused:
    """An entry this peer dropped without stopping the table: a replay from another table or
    position, a bad signature, a duplicate slot from an author not on turn. `error` says why."""

    error: LogError


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A party signed a second entry for an index that is final in our log (docs/protocol.md
    4.6): `error` (an `Equivocation`) names it and carries both signed entries, which anyone
    can check. Nothing in the log changes: the evidence is kept and told, once."""

    error: LogError


@dataclass(frozen=True, slots=True)
class Fault:
    """An entry was refused: `error` names its author and carries the evidence. The table
    accepts nothing more from the log past this point but a void agreement."""

    error: LogError


Event = (
    SeatsDrawn
    | HandStarted
    | CardSeen
    | MoveApplied
    | YourTurn
    | HandEnded
    | MatchEnded
    | TimedOut
    | TimeUp
    | VoidProposed
    | VoidHeld
    | Voided
    | Abandoned
    | Refused
    | Fault
    | Rewrite
)
