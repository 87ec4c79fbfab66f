"""The group layer: canonical encodings only, correct arithmetic, injected randomness."""

from __future__ import annotations

import hashlib
import pickle

import pytest
import rbcl
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.crypto.errors import CryptoError, InvalidPoint, InvalidScalar
from buraco_p2p.crypto.group import (
    BASE,
    IDENTITY,
    ONE,
    ZERO,
    DeterministicRandomSource,
    L,
    Point,
    Scalar,
    SystemRandomSource,
    multi_mul,
)

P25519 = 2**255 - 19

# RFC 9496 appendix A.1: encodings of 0*B .. 4*B.
RFC_MULTIPLES = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76",
    "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919",
    "94741f5d5d52755ece4f23f044ee27d5d1ea1e2bd196b462166b16152a9d0259",
    "da80862773358b466ffadfe0b3293ab3d9fd53c5ea6c955358f568322daf6a57",
]

# RFC 9496 appendix A.2: non-canonical field encodings and negative field elements.
RFC_BAD = [
    "00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "f3ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
]

scalars = st.integers(min_value=0, max_value=L - 1).map(Scalar.from_int)
nonzero_scalars = st.integers(min_value=1, max_value=L - 1).map(Scalar.from_int)


def test_base_point_and_small_multiples_match_rfc9496() -> None:
    assert BASE.to_bytes().hex() == RFC_MULTIPLES[1]
    for k, enc in enumerate(RFC_MULTIPLES):
        assert Point.base_mul(Scalar.from_int(k)).to_bytes().hex() == enc
        assert (Scalar.from_int(k) * BASE).to_bytes().hex() == enc
    acc = IDENTITY
    for enc in RFC_MULTIPLES:
        assert acc.to_bytes().hex() == enc
        acc = acc + BASE


@pytest.mark.parametrize("hexenc", RFC_BAD)
def test_rfc_invalid_encodings_are_refused(hexenc: str) -> None:
    with pytest.raises(InvalidPoint, match="canonical"):
        Point.from_bytes(bytes.fromhex(hexenc))


@pytest.mark.parametrize("k", [0, 1, 2, 5, 18])
def test_field_elements_at_or_above_p_are_refused(k: int) -> None:
    # s = p + k encodes the same field element as k, so it is never canonical.
    enc = (P25519 + k).to_bytes(32, "little")
    with pytest.raises(InvalidPoint):
        Point.from_bytes(enc)


def test_high_bit_set_on_a_valid_point_is_refused() -> None:
    enc = bytearray((Scalar.from_int(7) * BASE).to_bytes())
    enc[31] |= 0x80
    with pytest.raises(InvalidPoint):
        Point.from_bytes(bytes(enc))


def test_negated_field_encoding_is_refused() -> None:
    # p - s has the opposite parity of s: the "negative" twin of a valid encoding.
    s = int.from_bytes((Scalar.from_int(9) * BASE).to_bytes(), "little")
    twin = (P25519 - s).to_bytes(32, "little")
    with pytest.raises(InvalidPoint):
        Point.from_bytes(twin)


def test_identity_refused_unless_allowed() -> None:
    with pytest.raises(InvalidPoint, match="identity"):
        Point.from_bytes(bytes(32))
    p = Point.from_bytes(bytes(32), allow_identity=True)
    assert p is IDENTITY and p.is_identity()


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33), "00" * 32, 5, None])
def test_point_wrong_type_or_length(bad: object) -> None:
    with pytest.raises(InvalidPoint):
        Point.from_bytes(bad)  # type: ignore[arg-type]


@given(scalars)
def test_a_checked_point_is_rebuilt_from_its_encoding(s: Scalar) -> None:
    p = Point.base_mul(s)
    q = Point.from_checked_bytes(p.to_bytes())
    assert q == p and hash(q) == hash(p) and q + BASE == p + BASE


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33), bytearray(32), "00" * 32, None])
def test_a_checked_point_still_has_a_points_type_and_length(bad: object) -> None:
    with pytest.raises(InvalidPoint):
        Point.from_checked_bytes(bad)  # type: ignore[arg-type]


def test_random_bytes_are_mostly_not_points() -> None:
    rng = DeterministicRandomSource(b"random-32-bytes")
    refused = 0
    for _ in range(200):
        b = rng.bytes(32)
        valid = (
            not b[31] & 0x80 and rbcl.crypto_core_ristretto255_is_valid_point(b) and b != bytes(32)
        )
        if valid:
            assert Point.from_bytes(b).to_bytes() == b
        else:
            refused += 1
            with pytest.raises(InvalidPoint):
                Point.from_bytes(b)
    # Only about 1/8 of random strings decode (sign bit, square, parity, high bit).
    assert refused > 150


@given(scalars)
def test_point_roundtrip(s: Scalar) -> None:
    p = Point.base_mul(s)
    assert Point.from_bytes(p.to_bytes(), allow_identity=True) == p


def test_scalar_canonical_decoding() -> None:
    assert Scalar.from_bytes((L - 1).to_bytes(32, "little")).value == L - 1
    assert Scalar.from_bytes(bytes(32)) == ZERO
    for k in (0, 1, 2**3, 2**200):
        with pytest.raises(InvalidScalar, match="canonical"):
            Scalar.from_bytes((L + k).to_bytes(32, "little"))
    with pytest.raises(InvalidScalar):
        Scalar.from_bytes(b"\xff" * 32)
    for bad in (b"", bytes(31), bytes(33), 3, None, "x" * 32):
        with pytest.raises(InvalidScalar):
            Scalar.from_bytes(bad)  # type: ignore[arg-type]


def test_scalar_from_int_reduces_and_rejects_non_ints() -> None:
    assert Scalar.from_int(L) == ZERO
    assert Scalar.from_int(-1).value == L - 1
    with pytest.raises(TypeError):
        Scalar.from_int(True)
    with pytest.raises(TypeError):
        Scalar.from_int(1.0)  # type: ignore[arg-type]


@given(st.binary(min_size=64, max_size=64))
def test_scalar_wide_reduction_matches_libsodium(b: bytes) -> None:
    assert Scalar.from_hash(b).to_bytes() == rbcl.crypto_core_ristretto255_scalar_reduce(b)


def test_scalar_from_hash_needs_64_bytes() -> None:
    with pytest.raises(InvalidScalar):
        Scalar.from_hash(bytes(32))


@given(scalars, scalars)
def test_scalar_arithmetic_matches_libsodium(a: Scalar, b: Scalar) -> None:
    ab, bb = a.to_bytes(), b.to_bytes()
    assert (a + b).to_bytes() == rbcl.crypto_core_ristretto255_scalar_add(ab, bb)
    assert (a - b).to_bytes() == rbcl.crypto_core_ristretto255_scalar_sub(ab, bb)
    assert (a * b).to_bytes() == rbcl.crypto_core_ristretto255_scalar_mul(ab, bb)
    assert (-a).to_bytes() == rbcl.crypto_core_ristretto255_scalar_negate(ab)


@given(nonzero_scalars)
def test_scalar_inverse(a: Scalar) -> None:
    assert a * a.inverse() == ONE
    assert a.inverse().to_bytes() == rbcl.crypto_core_ristretto255_scalar_invert(a.to_bytes())


def test_zero_has_no_inverse() -> None:
    with pytest.raises(InvalidScalar):
        ZERO.inverse()


@given(scalars, scalars)
def test_point_homomorphism(a: Scalar, b: Scalar) -> None:
    pa, pb = Point.base_mul(a), Point.base_mul(b)
    assert Point.base_mul(a + b) == pa + pb
    assert Point.base_mul(a - b) == pa - pb
    assert Point.base_mul(a * b) == a * pb == pb * a
    assert -pa == Point.base_mul(-a)
    assert pa + (-pa) == IDENTITY


def test_zero_scalar_and_identity_multiply_to_identity() -> None:
    p = Point.base_mul(Scalar.from_int(12345))
    assert ZERO * p == IDENTITY
    assert Point.base_mul(ZERO) == IDENTITY
    assert Scalar.from_int(99) * IDENTITY == IDENTITY
    assert IDENTITY + p == p and p - IDENTITY == p
    # the largest canonical scalar is -1
    assert Scalar.from_int(L - 1) * p == -p


def test_multi_mul() -> None:
    rng = DeterministicRandomSource(b"multi")
    ss = [Scalar.random(rng) for _ in range(6)] + [ZERO]
    ps = [Point.random(rng) for _ in range(6)] + [Point.random(rng)]
    ps[2] = IDENTITY
    expected = IDENTITY
    for s, p in zip(ss, ps, strict=True):
        expected = expected + s * p
    assert multi_mul(ss, ps) == expected
    assert multi_mul([], []) == IDENTITY
    with pytest.raises(ValueError):
        multi_mul(ss, ps[:-1])


def test_hash_to_group_is_domain_separated_and_specified() -> None:
    a = Point.hash_to_group(b"buraco-p2p/test", b"x")
    assert a == Point.hash_to_group(b"buraco-p2p/test", b"x")
    assert a != Point.hash_to_group(b"buraco-p2p/test", b"y")
    # length prefixes: moving bytes between domain and message changes the point
    assert Point.hash_to_group(b"ab", b"c") != Point.hash_to_group(b"a", b"bc")
    digest = hashlib.sha512(
        (15).to_bytes(4, "big") + b"buraco-p2p/test" + (1).to_bytes(4, "big") + b"x"
    ).digest()
    assert a.to_bytes() == rbcl.crypto_core_ristretto255_from_hash(digest)
    assert not a.is_identity()


def test_values_are_immutable_hashable_and_picklable() -> None:
    s = Scalar.from_int(5)
    p = Point.base_mul(s)
    with pytest.raises(AttributeError):
        s._v = 6
    with pytest.raises(AttributeError):
        p._b = bytes(32)
    assert {s: 1}[Scalar.from_int(5)] == 1
    assert {p: 1}[Point.from_bytes(p.to_bytes())] == 1
    assert pickle.loads(pickle.dumps(s)) == s
    assert pickle.loads(pickle.dumps(p)) == p
    assert pickle.loads(pickle.dumps(IDENTITY)) == IDENTITY
    assert s != 5 and p != p.to_bytes()


def test_deterministic_random_source_is_reproducible_and_streamed() -> None:
    a, b = DeterministicRandomSource(b"seed"), DeterministicRandomSource(b"seed")
    assert a.bytes(10) + a.bytes(100) + a.bytes(0) + a.bytes(3) == b.bytes(113)
    c = DeterministicRandomSource(b"seed2")
    assert c.bytes(32) != DeterministicRandomSource(b"seed").bytes(32)
    # first block as specified
    tag = b"buraco-p2p/drbg/v1"
    block0 = hashlib.shake_256(
        len(tag).to_bytes(4, "big") + tag + (4).to_bytes(4, "big") + b"seed" + bytes(8)
    ).digest(64)
    assert DeterministicRandomSource(b"seed").bytes(64) == block0
    with pytest.raises(ValueError):
        a.bytes(-1)


def test_system_random_source_and_random_scalars() -> None:
    rng = SystemRandomSource()
    assert len(rng.bytes(17)) == 17
    values = {Scalar.random(rng) for _ in range(20)}
    assert len(values) == 20
    assert not Scalar.random_nonzero(rng).is_zero()


def test_errors_are_value_errors() -> None:
    assert issubclass(InvalidPoint, CryptoError)
    assert issubclass(InvalidScalar, CryptoError)
    assert issubclass(CryptoError, ValueError)


def test_direct_construction_validates() -> None:
    with pytest.raises(InvalidScalar):
        Scalar(L)
    with pytest.raises(InvalidScalar):
        Scalar(-1)
    assert Scalar(7) == Scalar.from_int(7)
    with pytest.raises(InvalidPoint):
        Point(b"\x01" * 32)
    with pytest.raises(InvalidPoint):
        Point(bytes(31))
    assert Point(BASE.to_bytes()) == BASE
    assert Point(bytes(32)) == IDENTITY
