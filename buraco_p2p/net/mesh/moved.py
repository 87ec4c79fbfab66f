"""A host whose address changed, the pure part: the signed `moved` record, and whom to dial.

When the host's router restarts it takes a new public address and every link through it
dies; nobody restarts. The host learns its new address (its mapping's external address, or
its STUN reflexive address) and signs a `moved` record naming its new candidates. Whatever
link comes back to one joiner carries it there, and every joiner passes it on to the joiners
it is still linked to; each checks the host's signature before it dials anything, so a
joiner can carry the host's word but cannot forge it (docs/protocol.md 2.15).

This module holds what to send, what to accept and whom to dial, as values: no sockets, no
clock, no task. The part that does the sending and dialing is `moving.py`.

Record (a bare mesh record, 2.10)::

    ["moved", serial, [[ip_text, port, kind], ...], sig]

`serial` counts the host's moves from 1; `kind` is a candidate kind (2.11); `sig` is the
host's Ed25519 signature over `"buraco-p2p/moved/v1" || table_id || pack([serial, addrs])`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import BadSignature, MeshError
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, InviteError

__all__ = [
    "MAX_MOVED_ADDRESSES",
    "MOVED",
    "MOVED_TAGS",
    "DialPlan",
    "Moved",
    "MovedRecordError",
    "host_dial_order",
    "make_moved",
    "moved_signed_bytes",
    "parse_moved",
    "reach_plan",
    "replace_candidates",
]

MOVED = "moved"
MOVED_TAGS = frozenset({MOVED})
MAX_MOVED_ADDRESSES = 16
MAX_SERIAL = 2**32 - 1
_DOMAIN = b"buraco-p2p/moved/v1"
_KINDS = frozenset(int(k) for k in (CandidateKind.HOST, CandidateKind.MAPPED,
                                    CandidateKind.REFLEXIVE))  # fmt: skip


class MovedRecordError(MeshError):
    """A `moved` record of the wrong shape, or one the host did not sign: the link it came
    on is closed (2.10), naming the peer that sent it."""


@dataclass(frozen=True)
class Moved:
    """The host's word that it can now be reached at `candidates` (in the order to try)."""

    serial: int
    candidates: tuple[Candidate, ...]

    @property
    def addresses(self) -> tuple[Endpoint, ...]:
        return tuple(c.endpoint for c in self.candidates)


def _addrs_wire(candidates: Sequence[Candidate]) -> list[Any]:
    return [[str(c.endpoint.ip), c.endpoint.port, int(c.kind)] for c in candidates]


def moved_signed_bytes(table_id: bytes, serial: int, candidates: Sequence[Candidate]) -> bytes:
    """What the host signs: the domain, the table id, and the record's serial and addresses."""
    return _DOMAIN + table_id + codec.pack([serial, _addrs_wire(candidates)])


def make_moved(identity: Identity, table_id: bytes, moved: Moved) -> list[Any]:
    """The host's signed `moved` record for `moved`."""
    if not 1 <= moved.serial <= MAX_SERIAL:
        raise ValueError("a moved serial is 1..2**32-1")
    if not 1 <= len(moved.candidates) <= MAX_MOVED_ADDRESSES:
        raise ValueError(f"a moved record names 1..{MAX_MOVED_ADDRESSES} addresses")
    sig = identity.sign(moved_signed_bytes(table_id, moved.serial, moved.candidates))
    return [MOVED, moved.serial, _addrs_wire(moved.candidates), sig]


def parse_moved(msg: Any, host: PeerKey, table_id: bytes, who: str) -> Moved:
    """A `moved` record checked in full: its shape, then the host's signature over it.

    `MovedRecordError` naming `who` (the peer it came from) for anything else; nothing in a
    record is used before the signature verifies."""
    if (
        not isinstance(msg, list)
        or len(msg) != 4
        or msg[0] != MOVED
        or not isinstance(msg[1], int)
        or isinstance(msg[1], bool)
        or not 1 <= msg[1] <= MAX_SERIAL
        or not isinstance(msg[2], list)
        or not 1 <= len(msg[2]) <= MAX_MOVED_ADDRESSES
        or not isinstance(msg[3], bytes)
        or len(msg[3]) != 64
    ):
        raise MovedRecordError(f"{who} sent a malformed moved record")
    found: list[Candidate] = []
    for entry in msg[2]:
        if (
            not isinstance(entry, list)
            or len(entry) != 3
            or not isinstance(entry[0], str)
            or len(entry[0]) > 64
            or "%" in entry[0]
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in entry[1:])
            or entry[2] not in _KINDS
        ):
            raise MovedRecordError(f"{who} sent a malformed address in a moved record")
        try:
            ep = Endpoint.parse(entry[0], entry[1])
        except (InviteError, ValueError):
            raise MovedRecordError(f"{who} sent a moved record address that does not parse") \
                from None  # fmt: skip
        if str(ep.ip) != entry[0]:
            raise MovedRecordError(f"{who} sent a moved record address not in its plain form")
        found.append(Candidate(CandidateKind(entry[2]), ep))
    try:
        host.verify(msg[3], moved_signed_bytes(table_id, msg[1], found))
    except BadSignature:
        raise MovedRecordError(f"{who} sent a moved record the host did not sign") from None
    return Moved(msg[1], tuple(found))


def replace_candidates(
    advertised: Sequence[Endpoint],
    kinds: dict[Endpoint, CandidateKind],
    found: Sequence[Candidate],
) -> tuple[tuple[Endpoint, ...], dict[Endpoint, CandidateKind]] | None:
    """The host's addresses once `found` (what its router or STUN says now) replaces the
    addresses of the same kinds; None when nothing changes. Addresses of other kinds (its own
    interfaces) stay, in their place; the found ones come first, so they are dialed first."""
    if not found:
        return None
    replaced = {c.kind for c in found}
    new = [c.endpoint for c in found]
    kept = [ep for ep in advertised
            if kinds.get(ep, CandidateKind.HOST) not in replaced and ep not in new]  # fmt: skip
    old = {ep for ep in advertised if kinds.get(ep, CandidateKind.HOST) in replaced}
    if old == set(new):
        return None
    addresses = tuple([*new, *kept][:MAX_MOVED_ADDRESSES])
    out = {ep: kinds.get(ep, CandidateKind.HOST) for ep in kept}
    out.update({c.endpoint: c.kind for c in found})
    return addresses, {ep: out[ep] for ep in addresses}


def host_dial_order(
    moved: Iterable[Endpoint], roster: Iterable[Endpoint], invite: Iterable[Endpoint]
) -> tuple[Endpoint, ...]:
    """A joiner's addresses for the host: the latest moved (or pasted) ones first, then the
    roster entry's, then the invite's, each once."""
    out: list[Endpoint] = []
    for ep in (*moved, *roster, *invite):
        if ep not in out:
            out.append(ep)
    return tuple(out)


@dataclass(frozen=True)
class DialPlan:
    """Host: how to reach one joiner again. `dial`: addresses of its roster entry, dialed as
    for any mesh link (the host the initiator; the joiner's listener answers, through its
    router's mapping if it has one); `punch`: the address its last link came from, opened by
    simultaneous open from our listening port, the joiner the initiator (2.11)."""

    dial: tuple[Endpoint, ...]
    punch: tuple[Endpoint, ...]


def reach_plan(
    roster: Sequence[Endpoint], observed: Endpoint | None, *, host_mapped: bool
) -> DialPlan:
    """Whom to dial for one joiner the host has lost: its roster addresses, and the address
    its link came from (its public one behind a cone NAT) when that is not among them and the
    host has no mapped address (a joiner then reaches the host through the mapping, and a
    punch from the host's port would only collide with its plain dial)."""
    wanted = observed is not None and observed not in roster and not host_mapped
    punch = (observed,) if wanted and observed is not None else ()
    return DialPlan(tuple(roster), punch)
