"""Agreeing the genesis over the mesh: the host proposes the terms, every party signs them.

Messages (msgpack arrays on the mesh, host to all then each to the host):

    ["terms", body]     the host's proposal: the genesis body (players in roster seat order,
                        rules, digest, timeout) for the mesh's table id
    ["gsig", sig]       a party's Ed25519 signature over the genesis' signing input
    ["e", wire]         the signed genesis (index 0), like every later entry

A party signs only terms whose player list is the roster it was given, with itself in it,
and whose rules parse and match their digest (`parse_genesis` checks the same again on the
signed entry). The genesis' party order is the roster's seat order; the session's seat draw
then decides the seats at the card table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buraco_p2p import codec
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.table.table import Member
from buraco_p2p.rules import RuleError, RuleSet
from buraco_p2p.session import Entry, bodies, decode_entry, parse_genesis
from buraco_p2p.session.entry import GENESIS_PREV, PROTOCOL_VERSION, signing_bytes
from buraco_p2p.session.errors import LogError

__all__ = ["GenesisError", "assemble", "check_terms", "sign_terms", "terms_body"]


class GenesisError(Exception):
    """Terms or a signature that this party will not accept; names the sender."""


def terms_body(members: Sequence[Member], rules: RuleSet, timeout_ms: int) -> dict[str, Any]:
    return {
        "players": [[m.key.raw, m.nickname] for m in members],
        "rules": rules.to_wire(),
        "digest": rules.digest(),
        "timeout": timeout_ms,
    }


def _unsigned(table_id: bytes, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "v": PROTOCOL_VERSION, "t": table_id, "i": 0, "p": GENESIS_PREV, "a": 0,
        "k": bodies.GENESIS, "b": body,
    }  # fmt: skip


def check_terms(body: Any, members: Sequence[Member], me: PeerKey) -> RuleSet:
    """The proposal's rules if it names exactly the roster (seat order) and parses."""
    if not isinstance(body, dict) or set(body) != {"players", "rules", "digest", "timeout"}:
        raise GenesisError("terms: not a genesis body")
    want = [[m.key.raw, m.nickname] for m in members]
    if body["players"] != want:
        raise GenesisError("terms: the players are not the table's roster in seat order")
    if me.raw not in [p[0] for p in want]:
        raise GenesisError("terms: we are not among the players")
    try:
        rules = RuleSet.from_wire(body["rules"])
    except RuleError as exc:
        raise GenesisError(f"terms: rules: {exc}") from None
    if rules.digest() != body["digest"] or rules.players != len(want):
        raise GenesisError("terms: the rules digest or player count does not match")
    return rules


def sign_terms(identity: Identity, table_id: bytes, body: dict[str, Any]) -> bytes:
    return identity.sign(signing_bytes(_unsigned(table_id, body)))


def assemble(table_id: bytes, body: dict[str, Any], sigs: Sequence[bytes]) -> Entry:
    """The genesis entry from the parties' signatures (in party order), fully checked."""
    full = _unsigned(table_id, body)
    full["s"] = list(sigs)
    try:
        entry = decode_entry(codec.pack(full))
        parse_genesis(entry)
    except LogError as exc:
        raise GenesisError(f"genesis: {exc}") from None
    return entry
