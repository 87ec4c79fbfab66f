"""What a mesh keeps about one seated peer across its links (`Peer`).

A value the mesh and its parts share (`MeshCore.records`): peerlinks.py makes and updates it,
mesh.py reads it to send, receive and snapshot.
"""

from __future__ import annotations

import trio

from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.outbox import LinkRun
from buraco_p2p.net.channel.reliable import ReliableChannel
from buraco_p2p.net.mesh.events import PeerUp

__all__ = ["Peer"]


class Peer:
    """What we keep about one seated peer across its links: delivery state and the live run."""

    def __init__(self, key: PeerKey, channel: ReliableChannel) -> None:
        self.key = key
        self.channel = channel
        self.link: SecureLink | None = None  # set only once resumed: safe to send data on
        self.run: LinkRun | None = None
        self.ack_wake = trio.Event()
        self.connector = False
        self.unread_bytes = 0  # encoded size of its messages waiting in our inbox
        self.shown: PeerUp | None = None  # the last PeerUp given out; None once shown down
