"""The lobby's application messages (docs/protocol.md 2.10): their wire forms and checks.

`["chat", text]`, `["ready"]`, `["rules", preset, [overrides]]` and `["bots", [key, ...]]` are
what seated peers say to each other over the mesh before the match starts. Every one arrives
from the network, so each is checked in full here before anything acts on it: a malformed one
is None (or False) and marks nothing. These checks need no lobby state, only the message, its
sender and the roster it is read against, so the lobby, the full-screen front end, a resumed
host's bot marks and the vector generators all read and write the messages the same way.

Everything shown on screen that came from the network (nicknames, chat text, rule names) goes
through `printable` first: a peer must not be able to rewrite another player's terminal.
"""

from __future__ import annotations

from typing import Any

from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.table.table import Roster

__all__ = [
    "MAX_CHAT",
    "MAX_RULE_OVERRIDES",
    "MAX_RULE_TEXT",
    "bots_announced",
    "bots_claimed",
    "bots_message",
    "chat_message",
    "chat_said",
    "is_ready",
    "printable",
    "rules_announced",
    "tag_of",
    "tagged",
]

MAX_CHAT = 500
# Bounds of the host's `["rules", preset, [overrides]]`: a longer list or override is malformed.
MAX_RULE_OVERRIDES = 16
MAX_RULE_TEXT = 80


def tag_of(message: Any) -> str | None:
    """The tag of a payload (an array led by a str), else None. A payload is any codec value a
    peer chose: its first element may be an array or a map, which no set or dict may be asked
    about (unhashable), so every reader finds the tag here before looking it up anywhere."""
    if isinstance(message, list) and message and isinstance(message[0], str):
        return message[0]
    return None


def tagged(message: Any, tag: str) -> bool:
    """Whether `message` claims to be a `tag` message (a list led by `tag`), well-formed or
    not: a malformed one of a kind the lobby owns is dropped, never passed on as another kind."""
    return tag_of(message) == tag


def chat_message(text: str) -> list[Any]:
    """Our `["chat", text]`, the text cut to `MAX_CHAT` characters."""
    return ["chat", text[:MAX_CHAT]]


def chat_said(message: Any) -> str | None:
    """The text of a well-formed `["chat", text]`, else None."""
    if isinstance(message, list) and len(message) == 2 and message[0] == "chat":
        text = message[1]
        if isinstance(text, str):
            return text
    return None


def is_ready(message: Any) -> bool:
    """Whether `message` is exactly `["ready"]`: any other `ready` is malformed."""
    return bool(message == ["ready"])


def rules_announced(message: Any) -> tuple[str, tuple[str, ...]] | None:
    """(preset, overrides) of a well-formed `["rules", preset, [overrides]]`, else None
    (docs/protocol.md 2.10); who may send it is the caller's check."""
    if not (isinstance(message, list) and len(message) == 3 and message[0] == "rules"):
        return None
    preset, overrides = message[1], message[2]
    if (
        not isinstance(preset, str)
        or not isinstance(overrides, list)
        or len(overrides) > MAX_RULE_OVERRIDES
        or not all(isinstance(o, str) and len(o) <= MAX_RULE_TEXT for o in overrides)
    ):
        return None
    return preset, tuple(overrides)


def bots_claimed(message: Any, sender: PeerKey, roster: Roster) -> frozenset[bytes] | None:
    """The keys of a well-formed `["bots", [key, ...]]` from the roster's host, else None
    (docs/protocol.md 2.10): each a valid identity key other than the host's, none twice, at
    most seats-1 of them. Whether each holds a seat is `bots_announced`'s check."""
    if not (isinstance(message, list) and len(message) == 2 and message[0] == "bots"):
        return None
    keys = message[1]
    if not isinstance(keys, list) or len(keys) > roster.seats - 1 or sender != roster.host.key:
        return None
    marked: set[bytes] = set()
    for key in keys:
        if type(key) is not bytes or key in marked or key == roster.host.key.raw:
            return None
        try:
            PeerKey(key)
        except ValueError:
            return None
        marked.add(key)
    return frozenset(marked)


def bots_announced(message: Any, sender: PeerKey, roster: Roster) -> frozenset[bytes] | None:
    """The keys a `bots` message marks against `roster`: a well-formed one (`bots_claimed`)
    whose every key holds a seat in it, else None."""
    keys = bots_claimed(message, sender, roster)
    if keys is None or not keys <= {m.key.raw for m in roster.members}:
        return None
    return keys


def bots_message(bots: frozenset[bytes], roster: Roster) -> list[Any]:
    """The host's `["bots", [key, ...]]` for the seated ones of `bots`, in seat order."""
    return ["bots", [m.key.raw for m in roster.members if m.key.raw in bots]]


def printable(text: str, limit: int = MAX_CHAT) -> str:
    """`text` with every control/format character replaced, cut to `limit` characters."""
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in text[:limit])
