"""The genesis: the table's terms, agreed by every party signing the same entry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from buraco_p2p.net.channel.identity import Identity, PeerKey, validate_nickname
from buraco_p2p.rules import RuleError, RuleSet
from buraco_p2p.session import bodies
from buraco_p2p.session.entry import GENESIS_PREV, PROTOCOL_VERSION, Entry, make_entry
from buraco_p2p.session.errors import MalformedEntry, WrongTable

__all__ = ["DEFAULT_TIMEOUT_MS", "Terms", "make_genesis", "parse_genesis"]

DEFAULT_TIMEOUT_MS = 120_000


@dataclass(frozen=True, slots=True)
class Terms:
    """What every party signed in the genesis."""

    table_id: bytes
    keys: tuple[PeerKey, ...]
    nicknames: tuple[str, ...]
    rules: RuleSet
    timeout_ms: int

    @property
    def parties(self) -> int:
        return len(self.keys)

    def fingerprints(self) -> tuple[str, ...]:
        return tuple(k.fingerprint() for k in self.keys)


def make_genesis(
    table_id: bytes,
    identities: Sequence[Identity],
    rules: RuleSet,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> Entry:
    """The genesis entry signed by every party (in the order given: that is the party order).

    Over a network the host proposes the unsigned terms and collects the signatures; here all
    the identities are at hand (tests, self-play).
    """
    body: dict[str, Any] = {
        "players": [[i.public.raw, i.nickname] for i in identities],
        "rules": rules.to_wire(),
        "digest": rules.digest(),
        "timeout": timeout_ms,
    }
    return make_entry(
        identities, table=table_id, index=0, prev=GENESIS_PREV, author=0,
        kind=bodies.GENESIS, body=body,
    )  # fmt: skip


def parse_genesis(entry: Entry) -> Terms:
    """Check a genesis entry completely (every signature included) and return its terms."""

    def bad(reason: str) -> MalformedEntry:
        return MalformedEntry(reason, index=entry.index, author=None, evidence=(entry.wire,))

    if entry.version != PROTOCOL_VERSION:
        raise WrongTable(
            f"protocol version {entry.version}, not {PROTOCOL_VERSION}",
            index=entry.index, evidence=(entry.wire,),
        )  # fmt: skip
    if entry.kind != bodies.GENESIS or entry.index != 0 or entry.author != 0:
        raise bad("the first entry must be the genesis (index 0, author 0)")
    if entry.prev != GENESIS_PREV:
        raise bad("the genesis names 32 zero bytes as its previous hash")
    if not isinstance(entry.sig, tuple):
        raise bad("the genesis carries one signature per party")
    body = entry.body
    if set(body) != {"players", "rules", "digest", "timeout"}:
        raise bad("genesis body keys must be digest, players, rules, timeout")
    players = body["players"]
    if not isinstance(players, list) or not 2 <= len(players) <= 8:
        raise bad("players must be a list of 2..8 [key, nickname] pairs")
    keys: list[PeerKey] = []
    nicks: list[str] = []
    for p in players:
        if not isinstance(p, list) or len(p) != 2:
            raise bad("a player is [identity key, nickname]")
        raw, nick = p
        try:
            keys.append(PeerKey(raw))
            if not isinstance(nick, str) or validate_nickname(nick) != nick:
                raise ValueError("a nickname must be a normalised, printable text")
        except ValueError as exc:
            raise bad(f"player {len(nicks)}: {exc}") from None
        nicks.append(nick)
    if len({k.raw for k in keys}) != len(keys):
        raise bad("the same identity key appears twice")
    try:
        rules = RuleSet.from_wire(body["rules"])
    except RuleError as exc:
        raise bad(f"rules: {exc}") from None
    if body["digest"] != rules.digest():
        raise bad("the rules digest does not match the rules")
    if rules.to_wire() != body["rules"]:
        raise bad("the rules are not in their canonical wire form")
    if rules.players != len(keys):
        raise bad(f"the rules are for {rules.players} players, the table has {len(keys)}")
    timeout = body["timeout"]
    if type(timeout) is not int or not bodies.MIN_TIMEOUT_MS <= timeout <= bodies.MAX_TIMEOUT_MS:
        raise bad("timeout must be an integer number of milliseconds in [1000, 86400000]")
    entry.verify(tuple(keys))
    return Terms(entry.table, tuple(keys), tuple(nicks), rules, timeout)
