"""The table's state machine as data: in each phase, which kind of entry is expected, who may
append it, whether it is a single entry or a round, and which phases may follow.

This is the one place that says who may append what when (docs/protocol.md's diagram is made
from `TRANSITIONS`). `buraco_p2p.session.table.Table` follows it: the phase picks the row, which
says what kind the next entry must be; when a step is complete, `buraco_p2p.session.flow`
picks the next phase among the row's `then` (which one is decided by the game: a move that
needs private reveals is followed by a shares round, a move that ends the hand by the count,
...) and the authors its `who` names from the table's state, and asserts both fit the table.

Who:

- ALL: every party, a round ordered by party index.
- SHUFFLER: the party at the seat whose turn it is to shuffle (seat order 0..N-1), one entry.
- MOVER: the party at the seat on turn in the engine, one entry.
- OWING: the parties that owe decryption shares for the reveals now due, a round by party.
- ACTIVE: every party that is not silent (a void agreement), a round by party.

A `void` round may interrupt any phase from `SEATS_COMMIT` to `TIME` once the table has timed
out waiting for a party (see `Peer.tick`); it is the only entry a silent party's absence lets
the others append. The `FINAL` round, once begun, is closed by its own entries only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from buraco_p2p.session import bodies

__all__ = ["TRANSITIONS", "Phase", "Rule", "Who"]


class Phase(Enum):
    GENESIS = "genesis"
    SEATS_COMMIT = "seats_commit"
    SEATS_REVEAL = "seats_reveal"
    HAND_KEYS = "hand_keys"
    SHUFFLE = "shuffle"
    DEAL = "deal"
    TURN = "turn"
    REVEAL = "reveal"
    COUNT = "count"
    RESULT = "result"
    OPEN = "open"
    TIME = "time"
    FINAL = "final"
    CLOSED = "closed"


class Who(Enum):
    ALL = "all"
    SHUFFLER = "shuffler"
    MOVER = "mover"
    OWING = "owing"
    ACTIVE = "active"


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    who: Who
    round: bool
    then: tuple[Phase, ...]
    doc: str


TRANSITIONS: dict[Phase, Rule] = {
    Phase.GENESIS: Rule(
        bodies.GENESIS, Who.ALL, False, (Phase.SEATS_COMMIT,),
        "the table's terms (identities, rules, timeout), signed by every party",
    ),
    Phase.SEATS_COMMIT: Rule(
        bodies.COMMIT, Who.ALL, True, (Phase.SEATS_REVEAL,),
        "commitments to the nonces that draw the seats and the first dealer",
    ),
    Phase.SEATS_REVEAL: Rule(
        bodies.REVEAL, Who.ALL, True, (Phase.HAND_KEYS,),
        "the nonces; their seed seats the parties and picks the first dealer",
    ),
    Phase.HAND_KEYS: Rule(
        bodies.KEYS, Who.ALL, True, (Phase.SHUFFLE,),
        "each seat's hand key with its proof, and its commitment for the cut",
    ),
    Phase.SHUFFLE: Rule(
        bodies.SHUFFLE, Who.SHUFFLER, False, (Phase.SHUFFLE, Phase.DEAL),
        "the deck re-encrypted and permuted, with a proof of shuffle, seat by seat",
    ),
    Phase.DEAL: Rule(
        bodies.DEAL, Who.ALL, True, (Phase.TURN,),
        "shares for the other seats' hands and the face-up card, and the cut nonce",
    ),
    Phase.TURN: Rule(
        bodies.MOVE, Who.MOVER, False, (Phase.TURN, Phase.REVEAL, Phase.COUNT),
        "a move by the seat on turn, with its own shares for the slots it shows",
    ),
    Phase.REVEAL: Rule(
        bodies.SHARES, Who.OWING, True, (Phase.TURN,),
        "shares for the private reveals now due (a drawn card, a pot)",
    ),
    Phase.COUNT: Rule(
        bodies.END, Who.ALL, True, (Phase.RESULT,),
        "shares that open every card left in a hand, for the count",
    ),
    Phase.RESULT: Rule(
        bodies.RESULT, Who.ALL, True, (Phase.OPEN,),
        "each seat's score of the hand and the engine's state hash",
    ),
    Phase.OPEN: Rule(
        bodies.OPEN, Who.ALL, True, (Phase.HAND_KEYS, Phase.TIME, Phase.FINAL),
        "each seat's secret key of the finished hand, so the log opens every card",
    ),
    Phase.TIME: Rule(
        bodies.TIME, Who.ALL, True, (Phase.HAND_KEYS, Phase.FINAL),
        "in a match with a time limit: each party's clock, in turn; up when over half say so",
    ),
    Phase.FINAL: Rule(
        bodies.FINAL, Who.ALL, True, (Phase.CLOSED,),
        "the match's final scores, signed by every party; the log is closed",
    ),
}  # fmt: skip

VOID_RULE = Rule(
    bodies.VOID, Who.ACTIVE, True, (Phase.HAND_KEYS, Phase.CLOSED),
    "after a timeout, the present parties void the hand (deal again) or end the match",
)  # fmt: skip
