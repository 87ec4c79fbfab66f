"""Frames on the wire and the per-direction AEAD state. Pure: bytes in, bytes out.

Every frame, handshake or traffic, is::

    u32be(L) || version (1 byte) || kind (1 byte) || body (L - 2 bytes)

`L` is checked against the receiver's limit as soon as the four length bytes are in, before a
single body byte is buffered, so a peer cannot make us hold more than one frame's worth of
memory. Traffic frames seal their body with ChaCha20-Poly1305 under a per-direction key, with
the nonce ``0x00000000 || u64be(counter)`` and the 6 header bytes as associated data: the
length, version and kind are authenticated, and since the receiver only ever tries the next
counter, a replayed, reordered, dropped or altered frame fails authentication.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from buraco_p2p.net.channel.errors import DecryptError, FrameTooLarge, LinkClosed

__all__ = [
    "DEFAULT_MAX_FRAME",
    "HANDSHAKE_MAX_FRAME",
    "HEADER_LEN",
    "KIND_CLOSE",
    "KIND_DATA",
    "KIND_HS_FINISH",
    "KIND_HS_INIT",
    "KIND_HS_INIT_SHORT",
    "KIND_HS_RESPONSE",
    "KIND_READY",
    "KIND_VERSION_ALERT",
    "MAX_COUNTER",
    "PROTOCOL_VERSION",
    "TAG_LEN",
    "Frame",
    "FrameReader",
    "ReceiveCipher",
    "SendCipher",
    "encode_frame",
]

PROTOCOL_VERSION = 2
HEADER_LEN = 6  # u32 length, version, kind
TAG_LEN = 16
# 1 MiB of payload (the codec's default limit) plus the AEAD tag and version/kind bytes.
DEFAULT_MAX_FRAME = (1 << 20) + TAG_LEN + 2
HANDSHAKE_MAX_FRAME = 512
MAX_COUNTER = 2**64 - 1

# Handshake frames (plaintext framing; their contents carry their own protection).
KIND_HS_INIT = 0x01
KIND_HS_RESPONSE = 0x02
KIND_HS_FINISH = 0x03
# INIT of a joiner holding only a short code (shortcode.py): the transcript starts from a
# fixed label instead of the table id it does not know yet.
KIND_HS_INIT_SHORT = 0x04
KIND_VERSION_ALERT = 0x0F
# Traffic frames (sealed).
KIND_READY = 0x10
KIND_DATA = 0x11
KIND_CLOSE = 0x12

_LENGTH = struct.Struct(">I")
_NONCE_PREFIX = b"\x00\x00\x00\x00"
_COUNTER = struct.Struct(">Q")


@dataclass(frozen=True)
class Frame:
    """One frame as received: `header` is the 6 bytes that traffic frames authenticate."""

    version: int
    kind: int
    body: bytes
    header: bytes


def frame_header(kind: int, body_len: int, version: int = PROTOCOL_VERSION) -> bytes:
    return _LENGTH.pack(body_len + 2) + bytes((version, kind))


def encode_frame(kind: int, body: bytes, version: int = PROTOCOL_VERSION) -> bytes:
    """A frame whose body is sent as is (handshake messages)."""
    return frame_header(kind, len(body), version) + body


class FrameReader:
    """Cuts a byte stream into frames, refusing any frame declared larger than `max_frame`."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        if max_frame < 2:
            raise ValueError("max_frame must leave room for the version and kind bytes")
        self.max_frame = max_frame
        self._buffer = bytearray()

    def feed(self, data: bytes | bytearray) -> None:
        self._buffer += data

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def wanted(self) -> int:
        """How many more bytes would complete the next frame (at least 1): a read-size hint."""
        if len(self._buffer) < 4:
            return 4 - len(self._buffer)
        length: int = _LENGTH.unpack_from(self._buffer)[0]
        return max(1, 4 + length - len(self._buffer))

    def next_frame(self) -> Frame | None:
        """The next complete frame, or None if more bytes are needed."""
        if len(self._buffer) < 4:
            return None
        (length,) = _LENGTH.unpack_from(self._buffer)
        if length > self.max_frame:
            raise FrameTooLarge(f"frame of {length} bytes declared, the limit is {self.max_frame}")
        if length < 2:
            raise DecryptError(f"frame of {length} bytes is too short to hold a header")
        end = 4 + length
        if len(self._buffer) < end:
            return None
        header = bytes(self._buffer[:HEADER_LEN])
        body = bytes(self._buffer[HEADER_LEN:end])
        del self._buffer[:end]
        return Frame(version=header[4], kind=header[5], body=body, header=header)

    def frames(self) -> Iterator[Frame]:
        while (frame := self.next_frame()) is not None:
            yield frame


def _nonce(counter: int) -> bytes:
    return _NONCE_PREFIX + _COUNTER.pack(counter)


class SendCipher:
    """Seals outgoing traffic frames with consecutive nonces; never reuses one."""

    def __init__(self, key: bytes, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self._aead = ChaCha20Poly1305(key)
        self.counter = 0
        self.max_frame = max_frame

    def seal(self, kind: int, payload: bytes) -> bytes:
        body_len = len(payload) + TAG_LEN
        if body_len + 2 > self.max_frame:
            raise FrameTooLarge(
                f"message of {len(payload)} bytes is over the frame limit of {self.max_frame}"
            )
        if self.counter > MAX_COUNTER:
            raise LinkClosed("send counter exhausted; the link must be re-established")
        header = frame_header(kind, body_len)
        sealed = self._aead.encrypt(_nonce(self.counter), payload, header)
        self.counter += 1
        return header + sealed


class ReceiveCipher:
    """Opens incoming traffic frames, accepting only the next counter value."""

    def __init__(self, key: bytes) -> None:
        self._aead = ChaCha20Poly1305(key)
        self.counter = 0

    def open(self, frame: Frame) -> bytes:
        if frame.version != PROTOCOL_VERSION:
            raise DecryptError(
                f"frame #{self.counter} carries version byte {frame.version}, "
                f"not {PROTOCOL_VERSION}"
            )
        if len(frame.body) < TAG_LEN:
            raise DecryptError(f"frame #{self.counter} is shorter than its authentication tag")
        if self.counter > MAX_COUNTER:
            raise LinkClosed("receive counter exhausted; the link must be re-established")
        try:
            payload = self._aead.decrypt(_nonce(self.counter), frame.body, frame.header)
        except InvalidTag as exc:
            raise DecryptError(
                f"frame #{self.counter} failed authentication "
                "(forged, replayed, reordered or corrupted)"
            ) from exc
        self.counter += 1
        return payload
