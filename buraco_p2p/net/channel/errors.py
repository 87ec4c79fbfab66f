"""The exception tree of the network layer.

Callers catch `LinkError` to drop one peer's link and keep everything else running; the
subclasses say why, and every message names the peer (fingerprint and/or address) when it is
known, because "who sent this" is the first question when something goes wrong at a table.
"""

from __future__ import annotations

from buraco_p2p import codec

__all__ = [
    "BadSignature",
    "DecodeError",
    "DecryptError",
    "FrameTooLarge",
    "HandshakeError",
    "HandshakeTimeout",
    "IdentityError",
    "LinkClosed",
    "LinkError",
    "MeshError",
    "NetError",
    "PeerMismatch",
    "TruncatedFrame",
    "VersionMismatch",
]


class NetError(Exception):
    """Base class of every error raised by `buraco_p2p.net`."""


class IdentityError(NetError):
    """The identity file is unreadable, corrupt or has unsafe contents."""


class BadSignature(ValueError):
    """An Ed25519 signature does not verify under the claimed key.

    A `ValueError` rather than a `NetError`: signatures are also checked far from any socket
    (the signed move log is verified offline).
    """


class LinkError(NetError):
    """Something is wrong with one link; that link is closed, the others are unaffected."""


class LinkClosed(LinkError):
    """The link is closed.

    `graceful` is True when the peer announced the close with an authenticated close frame,
    False when the connection simply ended between two frames (which an attacker on the path
    can also cause), or when we closed it ourselves.
    """

    def __init__(self, message: str, *, graceful: bool = False) -> None:
        super().__init__(message)
        self.graceful = graceful


class MeshError(NetError):
    """A mesh-level failure: unreachable host, unknown peer, protocol breach by a peer."""


class HandshakeError(LinkError):
    """The key exchange failed: wrong room secret, bad signature, malformed or missing message."""


class HandshakeTimeout(HandshakeError):
    """The peer stopped in the middle of the handshake."""


class VersionMismatch(HandshakeError):
    """The peer speaks a protocol version we do not."""


class PeerMismatch(HandshakeError):
    """The peer proved an identity other than the one we expected to reach."""


class FrameTooLarge(LinkError):
    """A frame (received or about to be sent) is over the size limit."""


class DecryptError(LinkError):
    """A frame failed authentication: forged, replayed, reordered or corrupted."""


class TruncatedFrame(DecryptError):
    """The connection ended in the middle of a frame."""


class DecodeError(LinkError, codec.DecodeError):
    """An authenticated frame whose payload is not an acceptable msgpack value.

    Also a `codec.DecodeError`, so code that only knows the codec can catch it.
    """
