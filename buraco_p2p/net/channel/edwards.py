"""Which 32-byte strings are acceptable Ed25519 identity keys.

Signature verification (RFC 8032, as OpenSSL does it) accepts any point encoding. That is
not enough for an identity: under a small-order public key one fixed signature verifies
for every message, so whoever knows the room secret could act as that identity and its
signed log would prove nothing; and a key with two encodings would be two identities with
one signer. So every identity key read from the network or from disk must be

* canonical: the y coordinate below p = 2^255 - 19, and no sign bit on x = 0;
* a point of the curve;
* of the prime order L: not one of the eight small-order points, and with no small-order
  component (an honest key, a clamped scalar times the base point, always is).

The arithmetic is plain integer arithmetic on extended coordinates: slow next to libsodium
but only run once per distinct key (the result is cached) and free of any new dependency.
Timing does not matter: public keys are public.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["KeyCheckError", "check_identity_key"]

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)

_Ext = tuple[int, int, int, int]  # (X, Y, Z, T) with x = X/Z, y = Y/Z, xy = T/Z


class KeyCheckError(ValueError):
    """A 32-byte string that is not an acceptable identity key, and why."""


def _decode(raw: bytes) -> tuple[int, int]:
    """RFC 8032 section 5.1.3, strictly: non-canonical encodings are refused."""
    value = int.from_bytes(raw, "little")
    sign = value >> 255
    y = value & ((1 << 255) - 1)
    if y >= _P:
        raise KeyCheckError("not a canonical Ed25519 key encoding (y is not below p)")
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x = (u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P)) % _P
    if (v * x * x - u) % _P != 0:
        x = (x * _SQRT_M1) % _P
        if (v * x * x - u) % _P != 0:
            raise KeyCheckError("not an Ed25519 key: the encoding is not a point of the curve")
    if x == 0 and sign:
        raise KeyCheckError("not a canonical Ed25519 key encoding (sign bit set on x = 0)")
    if x & 1 != sign:
        x = _P - x
    return x, y


def _add(a: _Ext, b: _Ext) -> _Ext:
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % _P
    bb = (y1 + x1) * (y2 + x2) % _P
    cc = 2 * _D * t1 * t2 % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _mul(n: int, point: _Ext) -> _Ext:
    result: _Ext = (0, 1, 1, 0)
    while n:
        if n & 1:
            result = _add(result, point)
        point = _add(point, point)
        n >>= 1
    return result


def _is_identity(point: _Ext) -> bool:
    x, y, z, _ = point
    return x % _P == 0 and (y - z) % _P == 0


def check_identity_key(raw: bytes) -> None:
    """Raise `KeyCheckError` unless `raw` is an acceptable identity key (see above)."""
    if len(raw) != 32:
        raise KeyCheckError("an Ed25519 public key is exactly 32 bytes")
    why = _why_refused(bytes(raw))
    if why is not None:
        raise KeyCheckError(why)


@lru_cache(maxsize=1024)
def _why_refused(raw: bytes) -> str | None:
    """The verdict on one key, cached whichever it is: a refused key costs no more twice."""
    try:
        x, y = _decode(raw)
    except KeyCheckError as exc:
        return str(exc)
    point: _Ext = (x, y, 1, x * y % _P)
    if _is_identity(_mul(8, point)):
        return "not an identity key: a small-order Ed25519 point"
    if not _is_identity(_mul(_L, point)):
        return "not an identity key: the point has a small-order component"
    return None
