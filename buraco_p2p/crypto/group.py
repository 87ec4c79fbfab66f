"""The ristretto255 group: canonical scalars and points, and sources of randomness.

All curve arithmetic is libsodium's (through rbcl); this module only guards the edges: a
`Point` can only be built from bytes that libsodium accepts as a canonical encoding (and, unless
asked, not the identity), and a `Scalar` only from a canonical integer below the group order.
Values are immutable and hashable so they can sit in transcripts, sets and dict keys.

Scalars are kept as Python integers: arithmetic mod l on ints is exact and quicker than a round
trip through C for every add. Timing is not constant; secrets here are per-hand card keys.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections.abc import Iterable, Sequence
from typing import Final, Protocol, Self, overload

import rbcl

from buraco_p2p.crypto.errors import CryptoError, InvalidPoint, InvalidScalar

__all__ = [
    "BASE",
    "IDENTITY",
    "ONE",
    "ZERO",
    "DeterministicRandomSource",
    "L",
    "Point",
    "RandomSource",
    "Scalar",
    "SystemRandomSource",
    "linear_combination",
    "multi_mul",
]

L: Final = 2**252 + 27742317777372353535851937790883648493
"""The prime order of the ristretto255 group."""

_POINT_BYTES: Final = 32
_SCALAR_BYTES: Final = 32
_WIDE_BYTES: Final = 64
_IDENTITY_BYTES: Final = bytes(32)


class RandomSource(Protocol):
    """Where randomness comes from; injected so that crypto code never reads global state."""

    def bytes(self, n: int) -> bytes: ...


class SystemRandomSource:
    """The operating system's CSPRNG: the only source to use for real play."""

    def bytes(self, n: int) -> bytes:
        return secrets.token_bytes(n)


class DeterministicRandomSource:
    """A reproducible stream for tests and test vectors; never for real secrets.

    Block i of the stream is SHAKE256(u32be(len(tag)) || tag || u32be(len(seed)) || seed ||
    u64be(i)) truncated to 64 bytes, with tag "buraco-p2p/drbg/v1"; `bytes(n)` hands out the
    next n bytes of the concatenated blocks.
    """

    _TAG: Final = b"buraco-p2p/drbg/v1"

    def __init__(self, seed: bytes) -> None:
        if not isinstance(seed, bytes):
            raise TypeError("seed must be bytes")
        self._prefix = _lp(self._TAG) + _lp(seed)
        self._counter = 0
        self._buffer = b""

    def bytes(self, n: int) -> bytes:
        if n < 0:
            raise ValueError("cannot draw a negative number of bytes")
        while len(self._buffer) < n:
            block = hashlib.shake_256(self._prefix + struct.pack(">Q", self._counter)).digest(64)
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class Scalar:
    """An integer mod l. Only canonical encodings (little-endian, < l) are accepted."""

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        """An immutable value: a copy of a table shares it."""
        return self

    __slots__ = ("_v",)
    _v: int

    def __init__(self, value: int) -> None:
        # Prefer from_int / from_bytes / from_hash / random, which say how the value arose.
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < L:
            raise InvalidScalar(f"a scalar is an integer in [0, l), got {value!r}")
        object.__setattr__(self, "_v", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Scalar is immutable")

    @classmethod
    def from_int(cls, n: int) -> Scalar:
        """Any integer, reduced mod l (negative values wrap)."""
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"a scalar is built from an int, not {type(n).__name__}")
        return cls(n % L)

    @classmethod
    def from_bytes(cls, b: bytes) -> Scalar:
        """Decode 32 little-endian bytes; anything >= l is refused rather than reduced."""
        if not isinstance(b, bytes | bytearray | memoryview):
            raise InvalidScalar(f"a scalar must be bytes, not {type(b).__name__}")
        b = bytes(b)
        if len(b) != _SCALAR_BYTES:
            raise InvalidScalar(f"a scalar is {_SCALAR_BYTES} bytes, got {len(b)}")
        v = int.from_bytes(b, "little")
        if v >= L:
            raise InvalidScalar("non-canonical scalar: value is not below the group order")
        return cls(v)

    @classmethod
    def from_hash(cls, b64: bytes) -> Scalar:
        """Reduce 64 uniformly random bytes (a SHA-512 digest) mod l: bias below 2^-250."""
        if not isinstance(b64, bytes) or len(b64) != _WIDE_BYTES:
            raise InvalidScalar(f"wide reduction needs exactly {_WIDE_BYTES} bytes")
        return cls(int.from_bytes(b64, "little") % L)

    @classmethod
    def random(cls, rng: RandomSource) -> Scalar:
        """A uniform scalar from 64 bytes of `rng` (wide reduction, negligible bias)."""
        return cls.from_hash(rng.bytes(_WIDE_BYTES))

    @classmethod
    def random_nonzero(cls, rng: RandomSource) -> Scalar:
        """A uniform non-zero scalar: for secret keys and re-encryption factors."""
        while True:
            s = cls.random(rng)
            if s._v:
                return s

    def to_bytes(self) -> bytes:
        return self._v.to_bytes(_SCALAR_BYTES, "little")

    def __bytes__(self) -> bytes:
        return self.to_bytes()

    def __int__(self) -> int:
        return self._v

    @property
    def value(self) -> int:
        """The integer in [0, l)."""
        return self._v

    def is_zero(self) -> bool:
        return self._v == 0

    def inverse(self) -> Scalar:
        if self._v == 0:
            raise InvalidScalar("zero has no inverse")
        return Scalar(pow(self._v, -1, L))

    def __add__(self, other: Scalar) -> Scalar:
        if not isinstance(other, Scalar):
            return NotImplemented
        return Scalar((self._v + other._v) % L)

    def __sub__(self, other: Scalar) -> Scalar:
        if not isinstance(other, Scalar):
            return NotImplemented
        return Scalar((self._v - other._v) % L)

    @overload
    def __mul__(self, other: Scalar) -> Scalar: ...
    @overload
    def __mul__(self, other: Point) -> Point: ...
    def __mul__(self, other: Scalar | Point) -> Scalar | Point:
        if isinstance(other, Scalar):
            return Scalar((self._v * other._v) % L)
        if isinstance(other, Point):
            return other._mul(self)
        return NotImplemented

    def __neg__(self) -> Scalar:
        return Scalar((-self._v) % L)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scalar):
            return NotImplemented
        return self._v == other._v

    def __hash__(self) -> int:
        return hash((Scalar, self._v))

    def __repr__(self) -> str:
        return f"Scalar({self.to_bytes().hex()})"

    def __reduce__(self) -> tuple[object, tuple[bytes]]:
        return (Scalar.from_bytes, (self.to_bytes(),))


class Point:
    """A ristretto255 element, held as its canonical 32-byte encoding.

    Built only through `from_bytes` (which validates), `hash_to_group`, arithmetic on points
    that were themselves valid, or `from_checked_bytes` (the encoding of such a point, handed
    between this program's own processes), so every instance is a valid group element.
    """

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        """An immutable value: a copy of a table shares it."""
        return self

    __slots__ = ("_b",)
    _b: bytes

    def __init__(self, encoding: bytes) -> None:
        """Validate like `from_bytes(encoding, allow_identity=True)`."""
        b = Point.from_bytes(encoding, allow_identity=True)._b
        object.__setattr__(self, "_b", b)

    @classmethod
    def _trusted(cls, encoding: bytes) -> Point:
        # For results of libsodium arithmetic on valid points: skips the decode check.
        p = object.__new__(cls)
        object.__setattr__(p, "_b", encoding)
        return p

    @classmethod
    def from_checked_bytes(cls, encoding: bytes) -> Point:
        """Rebuild a point from `to_bytes()` of a point this program already holds, without
        decoding it again: the encoding was validated when that point was made, so the rebuilt
        point is as valid. Safe only for bytes that never left this program's hands: a point
        passed between this process and its own worker processes (`buraco_p2p.verify_jobs`).
        Bytes from the network or a file, whoever wrote them, go through `from_bytes`."""
        if type(encoding) is not bytes or len(encoding) != _POINT_BYTES:
            raise InvalidPoint(f"a point is {_POINT_BYTES} bytes")
        return cls._trusted(encoding)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Point is immutable")

    @classmethod
    def from_bytes(cls, b: bytes, *, allow_identity: bool = False) -> Point:
        """Decode a canonical encoding; refuse the identity unless `allow_identity`."""
        if not isinstance(b, bytes | bytearray | memoryview):
            raise InvalidPoint(f"a point must be bytes, not {type(b).__name__}")
        b = bytes(b)
        if len(b) != _POINT_BYTES:
            raise InvalidPoint(f"a point is {_POINT_BYTES} bytes, got {len(b)}")
        if b == _IDENTITY_BYTES:
            if allow_identity:
                return IDENTITY
            raise InvalidPoint("the identity element is not allowed here")
        # libsodium ignores bit 255 when decoding; RFC 9496 requires s < p, so refuse it here.
        if b[31] & 0x80 or not rbcl.crypto_core_ristretto255_is_valid_point(b):
            raise InvalidPoint("not a canonical ristretto255 encoding")
        return cls._trusted(b)

    @classmethod
    def from_hash(cls, b64: bytes) -> Point:
        """Map 64 uniform bytes to a point (ristretto255 one-way map, two Elligator calls)."""
        if not isinstance(b64, bytes) or len(b64) != _WIDE_BYTES:
            raise CryptoError(f"hash-to-group needs exactly {_WIDE_BYTES} bytes")
        return cls._trusted(bytes(rbcl.crypto_core_ristretto255_from_hash(b64)))

    @classmethod
    def hash_to_group(cls, domain: bytes, msg: bytes) -> Point:
        """A point nobody knows the discrete log of: from_hash(SHA-512(lp(domain) || lp(msg)))."""
        if not isinstance(domain, bytes) or not isinstance(msg, bytes):
            raise TypeError("hash_to_group takes bytes")
        return cls.from_hash(hashlib.sha512(_lp(domain) + _lp(msg)).digest())

    @classmethod
    def random(cls, rng: RandomSource) -> Point:
        """A uniform point with unknown discrete log (for tests and blinding)."""
        return cls.from_hash(rng.bytes(_WIDE_BYTES))

    @staticmethod
    def base_mul(s: Scalar) -> Point:
        """s*G through libsodium's fixed-base table (about 3x faster than a generic multiply)."""
        mul = rbcl.crypto_scalarmult_ristretto255_base_allow_scalar_zero
        return Point._trusted(bytes(mul(s.to_bytes())))

    def to_bytes(self) -> bytes:
        return self._b

    def __bytes__(self) -> bytes:
        return self._b

    def is_identity(self) -> bool:
        return self._b == _IDENTITY_BYTES

    def __add__(self, other: Point) -> Point:
        if not isinstance(other, Point):
            return NotImplemented
        return Point._trusted(bytes(rbcl.crypto_core_ristretto255_add(self._b, other._b)))

    def __sub__(self, other: Point) -> Point:
        if not isinstance(other, Point):
            return NotImplemented
        return Point._trusted(bytes(rbcl.crypto_core_ristretto255_sub(self._b, other._b)))

    def __neg__(self) -> Point:
        return Point._trusted(bytes(rbcl.crypto_core_ristretto255_sub(_IDENTITY_BYTES, self._b)))

    def _mul(self, s: Scalar) -> Point:
        # libsodium's variable-base multiply only clears bit 255, which a canonical scalar
        # never has set, so this is exactly s*P; the zero scalar and identity yield identity.
        return Point._trusted(
            bytes(rbcl.crypto_scalarmult_ristretto255_allow_scalar_zero(s.to_bytes(), self._b))
        )

    def __mul__(self, other: Scalar) -> Point:
        if not isinstance(other, Scalar):
            return NotImplemented
        return self._mul(other)

    def __rmul__(self, other: Scalar) -> Point:
        if not isinstance(other, Scalar):
            return NotImplemented
        return self._mul(other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Point):
            return NotImplemented
        return self._b == other._b

    def __hash__(self) -> int:
        return hash((Point, self._b))

    def __repr__(self) -> str:
        return f"Point({self._b.hex()})"

    def __reduce__(self) -> tuple[object, tuple[bytes, bool]]:
        return (_point_from_bytes_any, (self._b, True))


def _point_from_bytes_any(b: bytes, allow_identity: bool) -> Point:
    return Point.from_bytes(b, allow_identity=allow_identity)


def multi_mul(scalars: Sequence[Scalar] | Iterable[Scalar], points: Sequence[Point]) -> Point:
    """sum s_i*P_i (see `linear_combination`, which it is with `Scalar` coefficients)."""
    ss = list(scalars)
    if len(ss) != len(points):
        raise ValueError(f"multi_mul needs as many scalars ({len(ss)}) as points ({len(points)})")
    return linear_combination((s._v, p) for s, p in zip(ss, points, strict=True))


def linear_combination(terms: Iterable[tuple[int, Point]]) -> Point:
    """sum v*P over the (v, P) pairs, v any integer (taken mod l), with as few curve operations
    as the terms allow.

    Through libsodium a variable-base multiplication costs about three and a half additions
    and a multiplication of the generator about one (every operation decodes its points and
    encodes its result). So the terms are merged by base first: the coefficients of a point
    named several times are added and it is multiplied once, the generator goes through the
    fixed-base table, zero coefficients and the identity drop out, and the first product
    starts the sum. The result is exact whatever the terms, so an equation can list its bases
    as it names them and the merging is left to this function.
    """
    merged: dict[bytes, int] = {}
    for v, p in terms:
        b = p._b
        merged[b] = merged.get(b, 0) + v
    add = rbcl.crypto_core_ristretto255_add
    mul = rbcl.crypto_scalarmult_ristretto255_allow_scalar_zero
    acc: bytes | None = None
    for b, v in merged.items():
        v %= L
        if v == 0 or b == _IDENTITY_BYTES:
            continue
        sb = v.to_bytes(_SCALAR_BYTES, "little")
        if b == _BASE_BYTES:
            term = rbcl.crypto_scalarmult_ristretto255_base_allow_scalar_zero(sb)
        else:
            term = mul(sb, b)
        acc = term if acc is None else add(acc, term)
    return IDENTITY if acc is None else Point._trusted(bytes(acc))


ZERO: Final = Scalar(0)
ONE: Final = Scalar(1)
IDENTITY: Final = Point._trusted(_IDENTITY_BYTES)
BASE: Final = Point.base_mul(ONE)
_BASE_BYTES: Final = BASE.to_bytes()
