"""A mesh's settings (`MeshConfig`) and the delivery state it persists (`MeshState`).

Values only: the play layer builds a config and stores a state without the mesh itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.reliable import DEFAULT_MAX_BUFFER, INCARNATION_LEN, ChannelState

__all__ = ["MeshConfig", "MeshState"]


@dataclass(frozen=True)
class MeshConfig:
    heartbeat_interval: float = 1.0
    heartbeat_timeout: float = 5.0
    direct_timeout: float = 3.0
    handshake_timeout: float = 10.0
    hello_timeout: float = 10.0
    redial_min: float = 0.05
    redial_max: float = 2.0
    # A relayed pair keeps trying the direct link, with this backoff, and moves to it.
    direct_retry_min: float = 1.0
    direct_retry_max: float = 30.0
    max_buffer: int = DEFAULT_MAX_BUFFER
    # Encoded bytes of one peer's messages that may wait unread in our inbox.
    max_unread_bytes: int = 64 << 20
    # Relayed bytes one link may have queued; past it the host drops the relayed channel.
    relay_queue_bytes: int = 4 << 20
    # Host: time simultaneous opens between joiners behind NATs (punching.py); a joiner's
    # window for one such punch.
    punch_peers: bool = True
    punch_window: float = 5.0
    # Test hook: True refuses direct links between the two keys (either order).
    refuse_direct: Callable[[PeerKey, PeerKey], bool] | None = None
    # Test hook on the host: sees every relayed chunk (source, destination, bytes).
    relay_tap: Callable[[PeerKey, PeerKey, bytes], None] | None = None


@dataclass(frozen=True)
class MeshState:
    """Delivery state to persist with the application's own state (see `Mesh.snapshot`)."""

    incarnation: bytes
    channels: dict[bytes, ChannelState]

    def to_wire(self) -> list[Any]:
        return [self.incarnation, {k.hex(): v.to_wire() for k, v in self.channels.items()}]

    @classmethod
    def from_wire(cls, value: Any) -> MeshState:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not isinstance(value[0], bytes)
            or len(value[0]) != INCARNATION_LEN
            or not isinstance(value[1], dict)
        ):
            raise MeshError("saved mesh state is malformed")
        channels: dict[bytes, ChannelState] = {}
        for key, state in value[1].items():
            try:
                raw = bytes.fromhex(key) if isinstance(key, str) else b""
            except ValueError:
                raw = b""
            if len(raw) != 32:
                raise MeshError("saved mesh state names an invalid peer key")
            channels[raw] = ChannelState.from_wire(state)
            if channels[raw].incarnation != value[0]:
                raise MeshError("saved mesh state mixes incarnations")
        return cls(value[0], channels)
