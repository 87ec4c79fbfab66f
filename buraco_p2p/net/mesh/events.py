"""What a mesh tells its application (`Mesh.next_event`): peers up and down, seats and names.

They are values only, so the session and UI layers can match on them without the mesh.
"""

from __future__ import annotations

from dataclasses import dataclass

from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.table.table import Roster

__all__ = [
    "MeshEvent",
    "NicknameChanged",
    "PeerDown",
    "PeerUp",
    "RosterChanged",
    "SeatFreed",
    "StreamReset",
]


@dataclass(frozen=True)
class PeerUp:
    peer: PeerKey
    nickname: str
    relayed: bool


@dataclass(frozen=True)
class PeerDown:
    peer: PeerKey
    reason: str


@dataclass(frozen=True)
class RosterChanged:
    roster: Roster


@dataclass(frozen=True)
class StreamReset:
    """`peer` restarted without its saved state.

    Some of its earlier messages may never arrive, and our unacknowledged messages were sent
    to it again: the application has to resynchronise with it at its own level.
    """

    peer: PeerKey


@dataclass(frozen=True)
class SeatFreed:
    """`peer` no longer holds `seat`: the host kicked it, or it left. `peer` may be us,
    and then the table is over for us (nothing reconnects any more)."""

    peer: PeerKey
    seat: int
    nickname: str
    reason: str  # "kicked" or "left"


@dataclass(frozen=True)
class NicknameChanged:
    """The roster shows the seated `peer` under a new nickname."""

    peer: PeerKey
    old: str
    new: str


MeshEvent = PeerUp | PeerDown | RosterChanged | StreamReset | SeatFreed | NicknameChanged
