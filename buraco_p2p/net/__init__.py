"""The network layer: identities, secure links, and (built on them) tables and the mesh.

This package is the only place besides the UI that does I/O, all of it with trio. It is four
packages, and imports between them go one way (tests/test_layers.py checks it):

    mesh/     the mesh, its links, admission, relay, punching, start-up, lobby, commands
      |  \
      |   table/   who is seated: roster, join and welcome messages, application messages
      |  /
    reach/    invites, candidates, STUN, punching, port mapping, discovery, codes
      |
    channel/  identities, handshake, frames, links, reliable delivery, errors

The names most callers need are re-exported here.
"""

from buraco_p2p.net.channel.errors import (
    BadSignature,
    DecodeError,
    DecryptError,
    FrameTooLarge,
    HandshakeError,
    HandshakeTimeout,
    IdentityError,
    LinkClosed,
    LinkError,
    NetError,
    PeerMismatch,
    TruncatedFrame,
    VersionMismatch,
)
from buraco_p2p.net.channel.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.channel.link import ConnectError, SecureLink, connect, handshake
from buraco_p2p.net.channel.server import LinkServer
from buraco_p2p.net.mesh.mesh import (
    JoinRequest,
    Mesh,
    MeshConfig,
    MeshError,
    MeshState,
    NicknameChanged,
    PeerDown,
    PeerUp,
    RosterChanged,
    SeatFreed,
    StreamReset,
)
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Invite, InviteError

__all__ = [
    "BadSignature",
    "ConnectError",
    "DecodeError",
    "DecryptError",
    "FrameTooLarge",
    "HandshakeError",
    "HandshakeTimeout",
    "Identity",
    "IdentityError",
    "Invite",
    "InviteError",
    "JoinRequest",
    "LinkClosed",
    "LinkError",
    "LinkServer",
    "Mesh",
    "MeshConfig",
    "MeshError",
    "MeshState",
    "NetError",
    "NicknameChanged",
    "PeerDown",
    "PeerKey",
    "PeerMismatch",
    "PeerUp",
    "RosterChanged",
    "SeatFreed",
    "SecureLink",
    "StreamReset",
    "TruncatedFrame",
    "VersionMismatch",
    "connect",
    "handshake",
    "host_table",
    "join_table",
    "load_or_create_identity",
]
