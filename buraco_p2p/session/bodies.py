"""Entry kinds and the schema of each body: exact keys, types and sizes.

A body that does not match its kind's schema raises `BodyError`; the table turns it into a
`MalformedEntry` naming the entry and its author. Whether a well-formed body is acceptable
(its turn, its proofs, its move) is the table's business.

    genesis  players [[identity key (32 bytes), nickname (text)], ...] (2..8, distinct keys),
             rules (the rules wire form), digest (32 bytes: the rules digest),
             timeout (int, milliseconds a party may keep the table waiting: 1000..86400000)
    commit   c (32 bytes): a commitment to the party's nonce for the seat and dealer draw
    reveal   n (32 bytes): that nonce
    keys     key (96 bytes: hand public key and Schnorr proof), c (32 bytes: cut commitment)
    shuffle  deck (64 bytes per card), proof (bytes)
    deal     shares (shares), n (32 bytes: the cut nonce)
    move     m (a move's wire form), shares (shares or nil: the mover's own shares for the
             slots the move shows)
    shares   shares (shares): a round of shares for private reveals that became due
    end      shares (shares or nil): shares for the end-of-hand public count
    result   totals [int per side, 1..N], state (32 bytes: the engine's state hash)
    open     secret (32 bytes: the hand's secret key, a canonical nonzero scalar)
    final    scores [int per side, 1..N]
    void     action ("void": deal the hand again; "end": the match ends; "replace": deal
             again, the silent parties' seats taken by the new identities), silent
             [parties], and for "replace" only, keys [identity key (32 bytes), one per silent
             party, valid Ed25519 keys, distinct], and for a retry only, try (int,
             1..N-1; absent means try 0; a retry's action is "end"); "decline" answers
             another party's void with its own: never part of a round
    time     ms (int, 0..2^31-1: the author's clock, milliseconds since it saw the seats
             drawn), a round by every party after each hand of a match with a time limit

where shares = {slots: [slot, ...] strictly ascending, batch: 32 bytes per slot + 64}.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

from buraco_p2p.engine import IllegalMove, move_from_wire
from buraco_p2p.net.channel.identity import PeerKey

__all__ = [
    "COMMIT",
    "DEAL",
    "DECLINE",
    "END",
    "END_ACTION",
    "FINAL",
    "GENESIS",
    "KEYS",
    "KINDS",
    "MOVE",
    "OPEN",
    "RESULT",
    "REVEAL",
    "SHARES",
    "SHUFFLE",
    "TIME",
    "TRY",
    "VOID",
    "BodyError",
    "Shares",
    "check_body",
    "is_decline",
    "void_try",
]

GENESIS: Final = "genesis"
COMMIT: Final = "commit"
REVEAL: Final = "reveal"
KEYS: Final = "keys"
SHUFFLE: Final = "shuffle"
DEAL: Final = "deal"
MOVE: Final = "move"
SHARES: Final = "shares"
END: Final = "end"
RESULT: Final = "result"
OPEN: Final = "open"
FINAL: Final = "final"
VOID: Final = "void"
TIME: Final = "time"
KINDS: Final = (
    GENESIS, COMMIT, REVEAL, KEYS, SHUFFLE, DEAL, MOVE, SHARES, END, RESULT, OPEN, FINAL, VOID,
    TIME,
)  # fmt: skip

MAX_SLOTS: Final = 162
MAX_DECK_BYTES: Final = 64 * MAX_SLOTS
MAX_PROOF_BYTES: Final = 1 << 19
MIN_TIMEOUT_MS: Final = 1_000
MAX_TIMEOUT_MS: Final = 86_400_000
MAX_CLOCK_MS: Final = 2**31 - 1
VOID_ACTIONS: Final = ("void", "end", "replace", "decline")
END_ACTION: Final = "end"  # the action of every retry (4.5)
# A void that answers another's: its author will never sign that point and try (4.5 rule
# 3). It is held and relayed like a vote, and is never an entry of a round.
DECLINE: Final = "decline"
TRY: Final = "try"  # a void entry's retry number (absent: try 0)
REPLACE: Final = "replace"


class BodyError(ValueError):
    """A body that does not match its kind's schema."""


@dataclass(frozen=True, slots=True)
class Shares:
    """Decryption shares for `slots` as one batch (the deck's `SharesMessage` without a seat)."""

    slots: tuple[int, ...]
    batch: bytes

    def to_wire(self) -> dict[str, Any]:
        return {"slots": list(self.slots), "batch": self.batch}


def _exact(body: Mapping[str, Any], keys: set[str]) -> None:
    if set(body) != keys:
        raise BodyError(f"body keys must be {sorted(keys)}, not {sorted(body)}")


def _bytes(body: Mapping[str, Any], key: str, size: int | None = None, most: int = 0) -> bytes:
    v = body[key]
    if not isinstance(v, bytes):
        raise BodyError(f"{key!r} must be bytes")
    if size is not None and len(v) != size:
        raise BodyError(f"{key!r} must be {size} bytes, not {len(v)}")
    if most and not 0 < len(v) <= most:
        raise BodyError(f"{key!r} must be 1..{most} bytes")
    return v


def _int(v: object, lo: int, hi: int, what: str) -> int:
    if type(v) is not int or not lo <= v <= hi:
        raise BodyError(f"{what} must be an integer in [{lo}, {hi}]")
    return v


def _ints(body: Mapping[str, Any], key: str, most: int) -> tuple[int, ...]:
    v = body[key]
    if not isinstance(v, list) or not 0 < len(v) <= most:
        raise BodyError(f"{key!r} must be a list of 1..{most} integers")
    return tuple(_int(x, -(2**31), 2**31 - 1, f"{key!r} item") for x in v)


def parse_shares(v: object, *, optional: bool) -> Shares | None:
    if v is None:
        if optional:
            return None
        raise BodyError("shares are required here")
    if not isinstance(v, dict) or set(v) != {"slots", "batch"}:
        raise BodyError("shares are a map with the keys slots and batch")
    raw = v["slots"]
    if not isinstance(raw, list) or not 0 < len(raw) <= MAX_SLOTS:
        raise BodyError(f"'slots' must be a list of 1..{MAX_SLOTS} slots")
    slots = tuple(_int(s, 0, MAX_SLOTS - 1, "a slot") for s in raw)
    if any(a >= b for a, b in pairwise(slots)):
        raise BodyError("slots must be strictly ascending")
    batch = v["batch"]
    if not isinstance(batch, bytes) or len(batch) != 32 * len(slots) + 64:
        raise BodyError("'batch' must be 32 bytes per slot and a 64-byte proof")
    return Shares(slots, batch)


def is_decline(body: Mapping[str, Any]) -> bool:
    """Whether a void body is a decline (an answer, 4.5 rule 3), not a vote."""
    return body.get("action") == DECLINE


def void_try(body: Mapping[str, Any]) -> int:
    """A void body's try (4.5): 0 where the key is absent, as in every void before retries
    (or where it is not a number: the schema refuses such a body anyway)."""
    t = body.get(TRY, 0)
    return t if type(t) is int else 0


def check_body(kind: str, body: Mapping[str, Any], parties: int, deck_size: int = 108) -> object:
    """Check a non-genesis body against its kind's schema; return its parsed value:
    bytes for commit/reveal/open, (key, c) for keys, (deck, proof) for shuffle, (Shares, n)
    for deal, (Move, Shares | None) for move, Shares | None for shares/end, (totals, state)
    for result, scores for final, (action, silent, keys, try) for void (keys empty but for
    "replace"), the clock reading for time."""
    if kind == COMMIT:
        _exact(body, {"c"})
        return _bytes(body, "c", 32)
    if kind == REVEAL:
        _exact(body, {"n"})
        return _bytes(body, "n", 32)
    if kind == KEYS:
        _exact(body, {"key", "c"})
        return _bytes(body, "key", 96), _bytes(body, "c", 32)
    if kind == SHUFFLE:
        _exact(body, {"deck", "proof"})
        deck = _bytes(body, "deck", most=MAX_DECK_BYTES)
        if len(deck) % 64:
            raise BodyError("'deck' must be 64 bytes per card")
        return deck, _bytes(body, "proof", most=MAX_PROOF_BYTES)
    if kind == DEAL:
        _exact(body, {"shares", "n"})
        return parse_shares(body["shares"], optional=False), _bytes(body, "n", 32)
    if kind == MOVE:
        _exact(body, {"m", "shares"})
        try:
            move = move_from_wire(body["m"], players=parties, deck_size=deck_size)
        except IllegalMove as exc:
            raise BodyError(f"bad move: {exc}") from None
        return move, parse_shares(body["shares"], optional=True)
    if kind == SHARES:
        _exact(body, {"shares"})
        return parse_shares(body["shares"], optional=False)
    if kind == END:
        _exact(body, {"shares"})
        return parse_shares(body["shares"], optional=True)
    if kind == RESULT:
        _exact(body, {"totals", "state"})
        return _ints(body, "totals", parties), _bytes(body, "state", 32)
    if kind == OPEN:
        _exact(body, {"secret"})
        return _bytes(body, "secret", 32)
    if kind == FINAL:
        _exact(body, {"scores"})
        return _ints(body, "scores", parties)
    if kind == VOID:
        action = body.get("action")
        if action not in VOID_ACTIONS:
            raise BodyError(f"'action' must be one of {VOID_ACTIONS}")
        allowed = {"action", "silent", "keys"} if action == REPLACE else {"action", "silent"}
        _exact(body, allowed | {TRY} if TRY in body else allowed)
        silent = body["silent"]
        if not isinstance(silent, list) or not 0 < len(silent) < parties:
            raise BodyError("'silent' must list 1..N-1 parties")
        out = tuple(_int(p, 0, parties - 1, "a silent party") for p in silent)
        if any(a >= b for a, b in pairwise(out)):
            raise BodyError("'silent' must be strictly ascending")
        # a retry (4.5); try 0 is written by leaving the key out
        attempt = _int(body[TRY], 1, parties - 1, "'try'") if TRY in body else 0
        if attempt and action not in (END_ACTION, DECLINE):
            raise BodyError("a retry's 'action' must be 'end'")
        if action != REPLACE:
            return action, out, (), attempt
        keys = body["keys"]
        if not isinstance(keys, list) or len(keys) != len(out):
            raise BodyError("'keys' must list one identity key per silent party")
        for k in keys:
            if not isinstance(k, bytes):
                raise BodyError("an identity key must be bytes")
            try:
                PeerKey(k)
            except ValueError as exc:
                raise BodyError(f"'keys': {exc}") from None
        if len(set(keys)) != len(keys):
            raise BodyError("'keys' must be distinct")
        return action, out, tuple(keys), attempt
    if kind == TIME:
        _exact(body, {"ms"})
        return _int(body["ms"], 0, MAX_CLOCK_MS, "'ms'")
    raise BodyError(f"unknown entry kind {kind!r}")
