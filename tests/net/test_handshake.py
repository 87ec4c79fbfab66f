"""The sans-IO handshake: key agreement, authentication, and every way it must fail."""

from __future__ import annotations

import hashlib
import hmac
import os
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.net.channel.errors import (
    DecryptError,
    FrameTooLarge,
    HandshakeError,
    PeerMismatch,
    VersionMismatch,
)
from buraco_p2p.net.channel.framing import (
    KIND_HS_FINISH,
    KIND_HS_INIT,
    KIND_HS_RESPONSE,
    Frame,
    FrameReader,
    ReceiveCipher,
    SendCipher,
    encode_frame,
)
from buraco_p2p.net.channel.handshake import (
    HandshakeResult,
    InitiatorHandshake,
    ResponderHandshake,
    secret_hint,
    version_alert,
)
from buraco_p2p.net.channel.identity import Identity, PeerKey

ROOM = bytes(range(16))
TABLE = b"table-0001"


def parse(data: bytes) -> Frame:
    reader = FrameReader(4096)
    reader.feed(data)
    frame = reader.next_frame()
    assert frame is not None and reader.buffered == 0
    return frame


def run(
    alice: Identity,
    bob: Identity,
    *,
    room_i: bytes = ROOM,
    room_r: bytes = ROOM,
    table_i: bytes = TABLE,
    table_r: bytes = TABLE,
    expect_i: PeerKey | None = None,
    expect_r: PeerKey | None = None,
    eph_i: X25519PrivateKey | None = None,
    eph_r: X25519PrivateKey | None = None,
) -> tuple[HandshakeResult, HandshakeResult, list[bytes]]:
    init = InitiatorHandshake(
        alice, room_secret=room_i, table_id=table_i, expected_peer=expect_i, ephemeral=eph_i
    )
    resp = ResponderHandshake(
        bob, room_secret=room_r, table_id=table_r, expected_peer=expect_r, ephemeral=eph_r
    )
    m1 = init.start()
    m2 = resp.receive_init(parse(m1))
    m3, result_i = init.receive_response(parse(m2))
    result_r = resp.receive_finish(parse(m3))
    return result_i, result_r, [m1, m2, m3]


@pytest.fixture
def alice() -> Identity:
    return Identity.generate("alice")


@pytest.fixture
def bob() -> Identity:
    return Identity.generate("bob")


def test_both_sides_agree_on_keys_and_identities(alice: Identity, bob: Identity) -> None:
    result_i, result_r, _ = run(alice, bob, expect_i=bob.public, expect_r=alice.public)
    assert result_i.peer == bob.public and result_i.peer_nickname == "bob"
    assert result_r.peer == alice.public and result_r.peer_nickname == "alice"
    assert result_i.send_key == result_r.receive_key
    assert result_i.receive_key == result_r.send_key
    assert result_i.send_key != result_i.receive_key
    assert result_i.session_hash == result_r.session_hash


def test_every_session_has_fresh_keys(alice: Identity, bob: Identity) -> None:
    first, _, _ = run(alice, bob)
    second, _, _ = run(alice, bob)
    assert first.send_key != second.send_key
    assert first.session_hash != second.session_hash


def test_identities_never_travel_in_clear(alice: Identity, bob: Identity) -> None:
    _, _, messages = run(alice, bob)
    wire = b"".join(messages)
    for secret in (alice.public.raw, bob.public.raw, b"alice", b"bob"):
        assert secret not in wire


def test_wrong_room_secret_is_refused_at_message_one(alice: Identity, bob: Identity) -> None:
    """The hint names a secret the responder does not hold: it answers nothing."""
    with pytest.raises(HandshakeError, match="room secret this table does not have"):
        run(alice, bob, room_i=os.urandom(16))


def test_wrong_table_id_fails(alice: Identity, bob: Identity) -> None:
    with pytest.raises(HandshakeError, match="does not have"):
        run(alice, bob, table_i=b"other-table")


def test_a_copied_hint_without_the_secret_gets_nowhere(
    alice: Identity, bob: Identity, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone who copies the hint off the wire, but lacks the secret, is answered under the
    real secret and cannot open the answer."""
    real_hint = secret_hint(ROOM, TABLE)
    module = sys.modules[InitiatorHandshake.__module__]
    monkeypatch.setattr(module, "secret_hint", lambda secret, table: real_hint)
    forger = InitiatorHandshake(alice, room_secret=os.urandom(16), table_id=TABLE)
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)
    m2 = resp.receive_init(parse(forger.start()))
    with pytest.raises(HandshakeError, match="authentication"):
        forger.receive_response(parse(m2))


def test_responder_answers_under_a_retired_secret_and_says_so(
    alice: Identity, bob: Identity
) -> None:
    old, older, new = os.urandom(16), os.urandom(16), os.urandom(16)
    for secret, retired in ((new, False), (old, True), (older, True)):
        init = InitiatorHandshake(alice, room_secret=secret, table_id=TABLE)
        resp = ResponderHandshake(
            bob, room_secret=new, table_id=TABLE, retired_secrets=(old, older)
        )
        m2 = resp.receive_init(parse(init.start()))
        m3, result_i = init.receive_response(parse(m2))
        result_r = resp.receive_finish(parse(m3))
        assert result_r.retired_secret is retired
        assert result_i.retired_secret is False
        assert result_i.send_key == result_r.receive_key
    stranger = InitiatorHandshake(alice, room_secret=os.urandom(16), table_id=TABLE)
    resp = ResponderHandshake(bob, room_secret=new, table_id=TABLE, retired_secrets=(old,))
    with pytest.raises(HandshakeError, match="does not have"):
        resp.receive_init(parse(stranger.start()))


def test_an_init_without_a_hint_is_refused(bob: Identity) -> None:
    """The version-1 INIT (a bare key) under version 2's byte is refused, not guessed at."""
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)
    with pytest.raises(HandshakeError, match="secret hint"):
        resp.receive_init(parse(encode_frame(KIND_HS_INIT, _raw(X25519PrivateKey.generate()))))


def test_a_version_one_init_gets_a_version_alert(bob: Identity) -> None:
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)
    old = encode_frame(KIND_HS_INIT, _raw(X25519PrivateKey.generate()), version=1)
    with pytest.raises(VersionMismatch, match="version 1"):
        resp.receive_init(parse(old))
    assert parse(version_alert()).body == b"\x02"


def test_secret_hint_depends_on_secret_and_table() -> None:
    base = secret_hint(ROOM, TABLE)
    assert len(base) == 8
    assert secret_hint(ROOM, b"table-0002") != base
    assert secret_hint(bytes(16), TABLE) != base
    assert base not in ROOM + TABLE


def test_initiator_checks_expected_peer(alice: Identity, bob: Identity) -> None:
    carol = Identity.generate("carol")
    with pytest.raises(PeerMismatch, match=carol.public.fingerprint()):
        run(alice, bob, expect_i=carol.public)


def test_responder_checks_expected_peer(alice: Identity, bob: Identity) -> None:
    carol = Identity.generate("carol")
    with pytest.raises(PeerMismatch, match=alice.public.fingerprint()):
        run(alice, bob, expect_r=carol.public)


def test_any_flipped_bit_in_any_message_fails(alice: Identity, bob: Identity) -> None:
    """Flip one bit of each byte position of each message: the handshake must never complete."""
    _, _, messages = run(alice, bob)
    for index in range(3):
        length = len(messages[index])
        positions = range(4, length)  # the length prefix is checked by the frame reader
        for position in positions:
            assert _tamper_run(alice, bob, index, position), (index, position)


def _tamper_run(alice: Identity, bob: Identity, index: int, position: int) -> bool:
    """Run a handshake with message `index` altered at `position`; True if it was refused."""
    init = InitiatorHandshake(alice, room_secret=ROOM, table_id=TABLE)
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)

    def alter(message: bytes, which: int) -> bytes:
        if which != index:
            return message
        return message[:position] + bytes([message[position] ^ 0x01]) + message[position + 1 :]

    try:
        m1 = alter(init.start(), 0)
        m2 = alter(resp.receive_init(parse(m1)), 1)
        m3, _ = init.receive_response(parse(m2))
        resp.receive_finish(parse(alter(m3, 2)))
    except HandshakeError:
        return True
    return False


def test_version_mismatch_both_ways(alice: Identity, bob: Identity) -> None:
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)
    future = encode_frame(KIND_HS_INIT, bytes(40), version=3)
    with pytest.raises(VersionMismatch, match="version 3"):
        resp.receive_init(parse(future))
    init = InitiatorHandshake(alice, room_secret=ROOM, table_id=TABLE)
    init.start()
    with pytest.raises(VersionMismatch, match="speaks: 2"):
        init.receive_response(parse(version_alert()))


@pytest.mark.parametrize(
    "body",
    # bytes(32) + the right hint: the all-zero (low-order) point; the others have bad lengths.
    [b"", bytes(31), bytes(33), bytes(32), bytes(40), bytes(32) + secret_hint(ROOM, TABLE)],
)
def test_malformed_or_low_order_init(bob: Identity, body: bytes) -> None:
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)
    with pytest.raises(HandshakeError):
        resp.receive_init(parse(encode_frame(KIND_HS_INIT, body)))


def test_out_of_order_messages(alice: Identity, bob: Identity) -> None:
    resp = ResponderHandshake(bob, room_secret=ROOM, table_id=TABLE)
    with pytest.raises(HandshakeError, match="before"):
        resp.receive_finish(parse(encode_frame(KIND_HS_FINISH, bytes(120))))
    init = InitiatorHandshake(alice, room_secret=ROOM, table_id=TABLE)
    init.start()
    with pytest.raises(HandshakeError, match="expected handshake message"):
        init.receive_response(parse(encode_frame(KIND_HS_INIT, bytes(32))))


def test_reflected_message_is_refused(alice: Identity) -> None:
    """A peer that sends our own messages back cannot pass as us (role-labelled signatures)."""
    other = Identity.generate("alice-too")
    init = InitiatorHandshake(alice, room_secret=ROOM, table_id=TABLE)
    resp = ResponderHandshake(other, room_secret=ROOM, table_id=TABLE)
    m2 = resp.receive_init(parse(init.start()))
    m3, _ = init.receive_response(parse(m2))
    # Feed the initiator's own finish (signed with the initiator label) as a response body.
    forged = encode_frame(KIND_HS_RESPONSE, parse(m2).body[:32] + parse(m3).body)
    init2 = InitiatorHandshake(alice, room_secret=ROOM, table_id=TABLE)
    init2.start()
    with pytest.raises(HandshakeError):
        init2.receive_response(parse(forged))


def test_parameters_are_validated(alice: Identity) -> None:
    with pytest.raises(ValueError, match="room secret"):
        InitiatorHandshake(alice, room_secret=bytes(8), table_id=TABLE)
    with pytest.raises(ValueError, match="table id"):
        InitiatorHandshake(alice, room_secret=ROOM, table_id=b"")
    with pytest.raises(ValueError, match="table id"):
        InitiatorHandshake(alice, room_secret=ROOM, table_id=bytes(65))


# An independent implementation of the key schedule of docs/protocol.md section 2.3, with
# hmac/hashlib only, checked against the module: the spec and the code say the same thing.


def _hkdf(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
        counter += 1
    return out[:length]


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _raw(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def test_key_schedule_matches_the_specification() -> None:
    alice = Identity.from_seed(bytes([1]) * 32, "alice")
    bob = Identity.from_seed(bytes([2]) * 32, "bob")
    eph_i = X25519PrivateKey.from_private_bytes(bytes([3]) * 32)
    eph_r = X25519PrivateKey.from_private_bytes(bytes([4]) * 32)
    result_i, result_r, (m1, m2, m3) = run(alice, bob, eph_i=eph_i, eph_r=eph_r)

    shared = eph_i.exchange(eph_r.public_key())
    h0 = _sha(b"buraco-p2p handshake v1\x00" + bytes([len(TABLE)]) + TABLE)
    hint = hmac.new(
        ROOM, b"buraco-p2p v2 secret hint\x00" + bytes([len(TABLE)]) + TABLE, hashlib.sha256
    ).digest()[:8]
    assert m1 == (42).to_bytes(4, "big") + b"\x02\x01" + _raw(eph_i) + hint
    h1 = _sha(h0 + m1)
    assert m2[:6] == (len(m2) - 4).to_bytes(4, "big") + b"\x02\x02"
    assert m2[6:38] == _raw(eph_r)
    h2 = _sha(h1 + m2[:38])
    keys = _hkdf(ROOM, shared, b"buraco-p2p v1 handshake keys" + h2, 64)
    k2, k3 = keys[:32], keys[32:]
    block_r = ChaCha20Poly1305(k2).decrypt(bytes(12), m2[38:], h2)
    payload_r = bob.public.raw + bytes([3]) + b"bob"
    assert block_r[:-64] == payload_r
    bob.public.verify(
        block_r[-64:], b"buraco-p2p v1 responder signature\x00" + _sha(h2 + payload_r)
    )
    h3 = _sha(h2 + m2[38:])
    assert m3[4:6] == b"\x02\x03"
    block_i = ChaCha20Poly1305(k3).decrypt(bytes(12), m3[6:], h3)
    payload_i = alice.public.raw + bytes([5]) + b"alice"
    assert block_i[:-64] == payload_i
    alice.public.verify(
        block_i[-64:], b"buraco-p2p v1 initiator signature\x00" + _sha(h3 + payload_i)
    )
    h4 = _sha(h3 + m3)
    traffic = _hkdf(ROOM, shared, b"buraco-p2p v1 traffic keys" + h4, 64)
    assert result_i.session_hash == h4 == result_r.session_hash
    assert result_i.send_key == traffic[:32] == result_r.receive_key
    assert result_i.receive_key == traffic[32:] == result_r.send_key


# Property tests of the pure parts: arbitrary bytes only ever give typed errors.


@given(st.binary(max_size=600), st.integers(0, 255), st.integers(0, 255))
def test_arbitrary_frames_into_the_responder_are_handshake_errors(
    body: bytes, version: int, kind: int
) -> None:
    resp = ResponderHandshake(Identity.generate("r"), room_secret=ROOM, table_id=TABLE)
    frame = Frame(version=version, kind=kind, body=body, header=b"\x00" * 6)
    try:
        resp.receive_init(frame)
    except HandshakeError:
        return
    assert (version, kind, len(body)) == (2, KIND_HS_INIT, 40)
    assert body[32:] == secret_hint(ROOM, TABLE)


@given(st.binary(min_size=0, max_size=400))
def test_arbitrary_response_bodies_are_handshake_errors(body: bytes) -> None:
    init = InitiatorHandshake(Identity.generate("i"), room_secret=ROOM, table_id=TABLE)
    init.start()
    with pytest.raises(HandshakeError):
        init.receive_response(parse(encode_frame(KIND_HS_RESPONSE, body)))


@given(st.lists(st.binary(max_size=300), max_size=6), st.data())
def test_frame_reader_reassembles_any_chunking(bodies: list[bytes], data: st.DataObject) -> None:
    wire = b"".join(encode_frame(0x11, body) for body in bodies)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=10)))
    reader = FrameReader(1000)
    out: list[bytes] = []
    start = 0
    for cut in [*cuts, len(wire)]:
        reader.feed(wire[start:cut])
        start = cut
        out.extend(frame.body for frame in reader.frames())
    assert out == bodies
    assert reader.buffered == 0


@given(st.binary(max_size=2000))
def test_frame_reader_on_garbage_gives_frames_or_typed_errors(garbage: bytes) -> None:
    reader = FrameReader(512)
    reader.feed(garbage)
    total = 0
    try:
        for frame in reader.frames():
            total += 4 + 2 + len(frame.body)
    except (FrameTooLarge, DecryptError):
        return
    assert total + reader.buffered == len(garbage)


def test_receive_cipher_refuses_replay_reorder_and_forgery() -> None:
    key = os.urandom(32)
    sender, receiver = SendCipher(key), ReceiveCipher(key)
    frames = [parse(sender.seal(0x11, f"m{i}".encode())) for i in range(3)]
    assert receiver.open(frames[0]) == b"m0"
    with pytest.raises(DecryptError, match="#0"):
        ReceiveCipher(key).open(frames[1])  # reordered: a fresh receiver expects #0
    with pytest.raises(DecryptError):
        receiver.open(frames[0])  # replay
    other = ReceiveCipher(key)
    other.open(frames[0])
    other.open(frames[1])
    forged = Frame(frames[2].version, 0x12, frames[2].body, frames[2].header[:5] + b"\x12")
    with pytest.raises(DecryptError):
        other.open(forged)  # kind changed: the header is authenticated
    assert other.open(frames[2]) == b"m2"
