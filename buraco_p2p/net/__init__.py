"""The network layer: identities, secure links, and (built on them) tables and the mesh.

This package is the only place besides the UI that does I/O, all of it with trio. The
public names of the link layer are re-exported here.
"""

from buraco_p2p.net.errors import (
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
from buraco_p2p.net.identity import Identity, PeerKey, load_or_create_identity
from buraco_p2p.net.link import ConnectError, LinkServer, SecureLink, connect, handshake

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
    "LinkClosed",
    "LinkError",
    "LinkServer",
    "NetError",
    "PeerKey",
    "PeerMismatch",
    "SecureLink",
    "TruncatedFrame",
    "VersionMismatch",
    "connect",
    "handshake",
    "load_or_create_identity",
]
