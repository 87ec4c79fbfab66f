"""The authenticated key exchange, as a sans-IO state machine (frames in, frames out).

A SIGMA-I style exchange of three messages, with the room secret mixed into every key::

    I -> R   HS_INIT      e_i || hint                           (X25519 ephemeral, 32 bytes)
    R -> I   HS_RESPONSE  e_r || AEAD_k2(id_r || nick_r || sig_r)
    I -> R   HS_FINISH    AEAD_k3(id_i || nick_i || sig_i)
    R -> I   READY        first sealed traffic frame (empty), so I knows R accepted it

All keys come from HKDF-SHA256 with the 128-bit room secret as salt and the X25519 shared
secret as input keying material, and their `info` carries a hash of the transcript so far
(which starts with the table id). So:

* only a holder of the room secret can decrypt message 2 or produce a valid message 3; with a
  uniformly random 128-bit secret there is nothing for an offline dictionary attack to guess;
* each side signs, with its long-term Ed25519 key, a hash of the transcript including both
  ephemeral keys and its own identity, under a role label ("responder"/"initiator"), so a
  signature cannot be replayed into another session, table or role;
* both identities travel encrypted: a passive observer, or anyone without the room secret,
  learns neither;
* the traffic keys depend on the whole transcript, so any tampering gives different keys.

`hint` names the room secret the initiator used (`secret_hint`), so a responder that accepts
several (a table whose invite was replaced: `retired_secrets`) knows which one to answer with
before it learns who is connecting; the result says whether a retired one was used, and the
caller decides what such a peer may do (a table seats nobody new with a replaced invite).

`docs/protocol.md` section 2.3 lists every byte of every hash and KDF input.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from buraco_p2p.net.channel.errors import (
    BadSignature,
    HandshakeError,
    PeerMismatch,
    VersionMismatch,
)
from buraco_p2p.net.channel.framing import (
    KIND_HS_FINISH,
    KIND_HS_INIT,
    KIND_HS_INIT_SHORT,
    KIND_HS_RESPONSE,
    KIND_VERSION_ALERT,
    PROTOCOL_VERSION,
    TAG_LEN,
    Frame,
    encode_frame,
    frame_header,
)
from buraco_p2p.net.channel.identity import Identity, PeerKey, validate_nickname

__all__ = [
    "HINT_LEN",
    "MAX_TABLE_ID_LEN",
    "MIN_ROOM_SECRET_LEN",
    "SHORT_TABLE_ID",
    "HandshakeResult",
    "InitiatorHandshake",
    "ResponderHandshake",
    "secret_hint",
    "version_alert",
]

PROLOGUE_LABEL = b"buraco-p2p handshake v1\x00"
HS_KEYS_INFO = b"buraco-p2p v1 handshake keys"
TRAFFIC_KEYS_INFO = b"buraco-p2p v1 traffic keys"
RESPONDER_SIG_LABEL = b"buraco-p2p v1 responder signature\x00"
INITIATOR_SIG_LABEL = b"buraco-p2p v1 initiator signature\x00"
SECRET_HINT_LABEL = b"buraco-p2p v2 secret hint\x00"
HINT_LEN = 8
MIN_ROOM_SECRET_LEN = 16
MAX_ROOM_SECRET_LEN = 64
MAX_TABLE_ID_LEN = 64
# The table id a short-code handshake (INIT kind 0x04) hashes into H0: the joiner knows only the
# host's address and the room secret, and learns the real table id over the finished link.
SHORT_TABLE_ID = b"buraco-p2p short invite v1"
_ZERO_NONCE = bytes(12)
_MAX_NICK_BYTES = 255


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _h0(table_id: bytes) -> bytes:
    return _sha256(PROLOGUE_LABEL + bytes((len(table_id),)) + table_id)


def _hkdf(room_secret: bytes, shared: bytes, info: bytes) -> tuple[bytes, bytes]:
    okm = HKDF(algorithm=hashes.SHA256(), length=64, salt=room_secret, info=info).derive(shared)
    return okm[:32], okm[32:]


def _check_secret(room_secret: bytes) -> None:
    if not isinstance(room_secret, bytes) or not (
        MIN_ROOM_SECRET_LEN <= len(room_secret) <= MAX_ROOM_SECRET_LEN
    ):
        raise ValueError(f"room secret must be {MIN_ROOM_SECRET_LEN}..{MAX_ROOM_SECRET_LEN} bytes")


def secret_hint(room_secret: bytes, table_id: bytes) -> bytes:
    """The 8 bytes of HS_INIT that tell the responder which room secret the initiator holds.

    A keyed hash (HMAC-SHA256 under the secret, over a label and the table id), so it gives an
    eavesdropper, who never sees an invite, nothing to work with: it does not reveal the secret
    (a PRF output), it cannot be computed without the secret, and knowing it is no help in
    the handshake, which still needs the secret itself to open message 2 or make message 3.
    What it does show is whether two handshakes to a table used the same secret.
    """
    _check_secret(room_secret)
    data = SECRET_HINT_LABEL + bytes((len(table_id),)) + table_id
    return hmac.new(room_secret, data, hashlib.sha256).digest()[:HINT_LEN]


def _public_bytes(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def version_alert() -> bytes:
    """The frame a responder sends before hanging up on a version it does not speak."""
    return encode_frame(KIND_VERSION_ALERT, bytes((PROTOCOL_VERSION,)))


def _identity_payload(identity: Identity) -> bytes:
    nick = identity.nickname.encode("utf-8")
    return identity.public.raw + bytes((len(nick),)) + nick


@dataclass(frozen=True)
class HandshakeResult:
    """What a completed handshake established."""

    peer: PeerKey
    peer_nickname: str
    send_key: bytes
    receive_key: bytes
    session_hash: bytes  # H4: unique to this session, usable as a channel binding
    # The responder answered under one of its retired room secrets (always False for I).
    retired_secret: bool = False
    short: bool = False  # a short-code handshake (keyed by the room secret, not the table id)


class _Handshake:
    def __init__(
        self,
        identity: Identity,
        *,
        room_secret: bytes,
        table_id: bytes,
        expected_peer: PeerKey | None = None,
        ephemeral: X25519PrivateKey | None = None,
    ) -> None:
        _check_secret(room_secret)
        if not isinstance(table_id, bytes) or not 1 <= len(table_id) <= MAX_TABLE_ID_LEN:
            raise ValueError(f"table id must be 1..{MAX_TABLE_ID_LEN} bytes")
        self._identity = identity
        self._room_secret = room_secret
        self._table_id = table_id
        self._retired = False
        self._expected = expected_peer
        self._ephemeral = ephemeral if ephemeral is not None else X25519PrivateKey.generate()
        self._hash = _h0(table_id)
        self._shared = b""
        self._short = False

    def _mix(self, data: bytes) -> bytes:
        self._hash = _sha256(self._hash + data)
        return self._hash

    def _exchange(self, peer_ephemeral: bytes) -> None:
        try:
            public = X25519PublicKey.from_public_bytes(peer_ephemeral)
            self._shared = self._ephemeral.exchange(public)
        except ValueError as exc:
            raise HandshakeError(f"peer sent an unusable ephemeral key: {exc}") from exc
        if self._shared == bytes(32):  # pragma: no cover - OpenSSL already refuses this
            raise HandshakeError("peer sent a low-order ephemeral key")

    def _seal_identity(self, key: bytes, label: bytes) -> bytes:
        payload = _identity_payload(self._identity)
        signature = self._identity.sign(label + _sha256(self._hash + payload))
        return ChaCha20Poly1305(key).encrypt(_ZERO_NONCE, payload + signature, self._hash)

    def _open_identity(self, key: bytes, sealed: bytes, label: bytes) -> tuple[PeerKey, str]:
        """Decrypt, parse and verify the peer's identity block (bound to the current hash)."""
        try:
            plain = ChaCha20Poly1305(key).decrypt(_ZERO_NONCE, sealed, self._hash)
        except InvalidTag as exc:
            raise HandshakeError(
                "handshake message failed authentication: wrong room secret or table, "
                "or the message was tampered with"
            ) from exc
        if len(plain) < 32 + 1 + 64:
            raise HandshakeError("identity block too short")
        nick_len = plain[32]
        if len(plain) != 32 + 1 + nick_len + 64:
            raise HandshakeError("identity block has the wrong length")
        try:
            peer = PeerKey(plain[:32])
        except ValueError as exc:
            raise HandshakeError(f"peer sent an invalid identity key: {exc}") from exc
        nick_bytes = plain[33 : 33 + nick_len]
        try:
            nickname = nick_bytes.decode("utf-8")
            if validate_nickname(nickname) != nickname:
                raise ValueError("nickname is not in normal form")
        except ValueError as exc:
            raise HandshakeError(f"peer {peer.fingerprint()} sent a bad nickname: {exc}") from exc
        signature = plain[33 + nick_len :]
        try:
            peer.verify(signature, label + _sha256(self._hash + plain[: 33 + nick_len]))
        except BadSignature as exc:
            raise HandshakeError(
                f"peer {peer.fingerprint()} did not prove it holds its identity key"
            ) from exc
        if self._expected is not None and peer != self._expected:
            raise PeerMismatch(
                f"expected peer {self._expected.fingerprint()}, "
                f"but {peer.fingerprint()} ({nickname!r}) answered"
            )
        return peer, nickname

    def _finish(self, peer: PeerKey, nickname: str, initiator: bool) -> HandshakeResult:
        i_to_r, r_to_i = _hkdf(self._room_secret, self._shared, TRAFFIC_KEYS_INFO + self._hash)
        send, receive = (i_to_r, r_to_i) if initiator else (r_to_i, i_to_r)
        return HandshakeResult(
            peer=peer,
            peer_nickname=nickname,
            send_key=send,
            receive_key=receive,
            session_hash=self._hash,
            retired_secret=self._retired,
            short=self._short,
        )


def _check_frame(frame: Frame, kind: int) -> None:
    if frame.kind == KIND_VERSION_ALERT:
        spoken = ", ".join(str(b) for b in frame.body[:8]) or "none"
        raise VersionMismatch(
            f"peer does not speak protocol version {PROTOCOL_VERSION} (it speaks: {spoken})"
        )
    if frame.version != PROTOCOL_VERSION:
        raise VersionMismatch(
            f"peer speaks protocol version {frame.version}, we speak {PROTOCOL_VERSION}"
        )
    if frame.kind != kind:
        raise HandshakeError(f"expected handshake message {kind:#04x}, got {frame.kind:#04x}")


class InitiatorHandshake(_Handshake):
    """The side that opened the connection: `start()`, then `receive_response()`.

    With `short=True` it is a joiner holding only a short code: INIT has kind 0x04 and H0
    hashes `SHORT_TABLE_ID` (the `table_id` argument is ignored).
    """

    def __init__(
        self,
        identity: Identity,
        *,
        room_secret: bytes,
        table_id: bytes,
        expected_peer: PeerKey | None = None,
        ephemeral: X25519PrivateKey | None = None,
        short: bool = False,
    ) -> None:
        super().__init__(
            identity,
            room_secret=room_secret,
            table_id=SHORT_TABLE_ID if short else table_id,
            expected_peer=expected_peer,
            ephemeral=ephemeral,
        )
        self._short = short

    def start(self) -> bytes:
        kind = KIND_HS_INIT_SHORT if self._short else KIND_HS_INIT
        hint = secret_hint(self._room_secret, self._table_id)  # SHORT_TABLE_ID's when short
        message = encode_frame(kind, _public_bytes(self._ephemeral) + hint)
        self._mix(message)  # H1
        return message

    def receive_response(self, frame: Frame) -> tuple[bytes, HandshakeResult]:
        """Check message 2; return message 3 and the session (pending the peer's READY)."""
        _check_frame(frame, KIND_HS_RESPONSE)
        if len(frame.body) < 32 + TAG_LEN:
            raise HandshakeError("handshake response too short")
        peer_ephemeral, sealed = frame.body[:32], frame.body[32:]
        self._mix(frame.header + peer_ephemeral)  # H2
        self._exchange(peer_ephemeral)
        k2, k3 = _hkdf(self._room_secret, self._shared, HS_KEYS_INFO + self._hash)
        peer, nickname = self._open_identity(k2, sealed, RESPONDER_SIG_LABEL)
        self._mix(sealed)  # H3
        message = encode_frame(KIND_HS_FINISH, self._seal_identity(k3, INITIATOR_SIG_LABEL))
        self._mix(message)  # H4
        return message, self._finish(peer, nickname, initiator=True)


def _hint_map(
    secrets: list[tuple[bytes, bool]], table_id: bytes
) -> dict[bytes, tuple[bytes, bool]]:
    """Each secret (and whether it is retired) by its hint for `table_id`."""
    by_hint: dict[bytes, tuple[bytes, bool]] = {}
    for secret, retired in secrets:
        hint = secret_hint(secret, table_id)
        known = by_hint.get(hint)
        if known is not None and known[0] != secret:
            raise ValueError("two room secrets of the table have the same hint")
        by_hint.setdefault(hint, (secret, retired))
    return by_hint


class ResponderHandshake(_Handshake):
    """The side that accepted the connection: `receive_init()`, then `receive_finish()`.

    It answers under `room_secret` or any of `retired_secrets`, whichever the initiator's hint
    names (`HandshakeResult.retired_secret` says it was a retired one). With
    `accept_short=True` (a host) it also answers a short-code INIT (kind 0x04), whose
    transcript and hint start from `SHORT_TABLE_ID`; the result then says `short`.
    """

    _k3 = b""
    accept_short = False

    def __init__(
        self,
        identity: Identity,
        *,
        room_secret: bytes,
        table_id: bytes,
        expected_peer: PeerKey | None = None,
        ephemeral: X25519PrivateKey | None = None,
        retired_secrets: Sequence[bytes] = (),
    ) -> None:
        super().__init__(
            identity,
            room_secret=room_secret,
            table_id=table_id,
            expected_peer=expected_peer,
            ephemeral=ephemeral,
        )
        self._secrets = [(room_secret, False), *((s, True) for s in retired_secrets)]
        self._by_hint = _hint_map(self._secrets, table_id)

    def _short_hints(self) -> dict[bytes, tuple[bytes, bool]]:
        return _hint_map(self._secrets, SHORT_TABLE_ID)

    def receive_init(self, frame: Frame) -> bytes:
        """Check message 1 and return message 2."""
        if self.accept_short and frame.kind == KIND_HS_INIT_SHORT:
            self._short = True
            self._hash = _h0(SHORT_TABLE_ID)
        _check_frame(frame, KIND_HS_INIT_SHORT if self._short else KIND_HS_INIT)
        if len(frame.body) != 32 + HINT_LEN:
            raise HandshakeError(
                f"handshake init must carry a 32-byte key and a {HINT_LEN}-byte secret hint"
            )
        hints = self._short_hints() if self._short else self._by_hint
        chosen = hints.get(frame.body[32:])
        if chosen is None:
            raise HandshakeError(
                "handshake init names a room secret this table does not have "
                "(a wrong invite, or one for another table)"
            )
        self._room_secret, self._retired = chosen
        self._mix(frame.header + frame.body)  # H1
        self._exchange(frame.body[:32])
        ephemeral = _public_bytes(self._ephemeral)
        # The frame header (hashed into H2) holds the length, known before sealing.
        sealed_len = len(_identity_payload(self._identity)) + 64 + TAG_LEN
        header = frame_header(KIND_HS_RESPONSE, 32 + sealed_len)
        self._mix(header + ephemeral)  # H2
        k2, self._k3 = _hkdf(self._room_secret, self._shared, HS_KEYS_INFO + self._hash)
        sealed = self._seal_identity(k2, RESPONDER_SIG_LABEL)
        self._mix(sealed)  # H3
        return header + ephemeral + sealed

    def receive_finish(self, frame: Frame) -> HandshakeResult:
        """Check message 3; the handshake is complete on our side."""
        if not self._k3:
            raise HandshakeError("handshake finish before handshake init")
        _check_frame(frame, KIND_HS_FINISH)
        peer, nickname = self._open_identity(self._k3, frame.body, INITIATOR_SIG_LABEL)
        self._mix(frame.header + frame.body)  # H4
        return self._finish(peer, nickname, initiator=False)
