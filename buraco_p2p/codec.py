"""The one msgpack codec every layer uses for bytes that cross a trust boundary.

Two jobs, both about untrusted or signed bytes:

* Decoding enforces explicit limits (total size, string/bin/array/map lengths, nesting depth,
  number of objects, plain types only) *before* anything is built: a first pass walks the
  headers of the encoding without allocating (`_scan`), so a peer cannot make us build a huge,
  deeply nested or very numerous object from a few bytes ("msgpack bomb"), and the work and
  memory of a decode stay within a small multiple of the frame's size. Every failure is a
  `DecodeError`, never a bare `ValueError`/`KeyError` from deep inside msgpack.
* Encoding is canonical: map keys are ordered by their own encoding, ints use their shortest
  form, no floats, no extension types. The same value always gives the same bytes, so a hash or
  a signature over an encoding is stable across peers and implementations. `unpack(...,
  canonical=True)` additionally refuses any encoding that is not the canonical one, so a signed
  message has exactly one byte representation; the same header walk checks it (shortest
  headers and ints, map keys in increasing order of their encodings), at no extra pass.

The value model is deliberately small: None, bool, int (-2**63 .. 2**64-1), str (UTF-8), bytes,
list (tuples encode as lists) and dict with str or int keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgpack

__all__ = [
    "DEFAULT_LIMITS",
    "CodecError",
    "DecodeError",
    "EncodeError",
    "Limits",
    "pack",
    "unpack",
]

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


class CodecError(ValueError):
    """Base class of codec failures."""


class DecodeError(CodecError):
    """Bytes that are not an acceptable encoding: malformed, over a limit or of a banned type."""


class EncodeError(CodecError):
    """A value outside the codec's value model (float, set, object, over-deep, ...)."""


@dataclass(frozen=True)
class Limits:
    """Upper bounds applied while decoding (and, for depth and size, while encoding).

    The defaults fit every message of the game protocol with a wide margin (a shuffle proof
    over 108 ciphertexts is a few tens of KiB) while keeping the worst-case memory a hostile
    peer can make us allocate to a small multiple of `max_bytes`.
    """

    max_bytes: int = 1 << 20
    max_str_len: int = 1 << 16
    max_bin_len: int = 1 << 20
    max_array_len: int = 1 << 14
    max_map_len: int = 1 << 12
    max_depth: int = 32
    # Every value counts one (a map entry two: its key and its value). Each costs tens of
    # bytes once built, so this bounds the memory of a frame of tiny objects, which the
    # length limits alone do not (a million empty arrays fit in 1 MiB).
    max_objects: int = 1 << 15

    def __post_init__(self) -> None:
        for name in (
            "max_bytes",
            "max_str_len",
            "max_bin_len",
            "max_array_len",
            "max_map_len",
            "max_depth",
            "max_objects",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive int, got {value!r}")


DEFAULT_LIMITS = Limits()


def _key_sort_key(item: tuple[bytes, Any]) -> bytes:
    return item[0]


def _canonical(value: Any, depth: int, limits: Limits) -> Any:
    """Check `value` against the value model and return it with every map sorted canonically."""
    if depth > limits.max_depth:
        raise EncodeError(f"value nested deeper than {limits.max_depth} levels")
    if value is None or isinstance(value, bool | str | bytes):
        return value
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise EncodeError(f"int {value} outside the 64-bit msgpack range")
        return value
    if isinstance(value, list | tuple):
        return [_canonical(item, depth + 1, limits) for item in value]
    if isinstance(value, Mapping):
        items: list[tuple[bytes, Any]] = []
        for key, item in value.items():
            if isinstance(key, bool) or not isinstance(key, str | int):
                raise EncodeError(f"map key {key!r} is not a str or int")
            if isinstance(key, int) and not _INT_MIN <= key <= _INT_MAX:
                raise EncodeError(f"map key {key} outside the 64-bit msgpack range")
            items.append((msgpack.packb(key, use_bin_type=True), (key, item)))
        items.sort(key=_key_sort_key)
        return {key: _canonical(item, depth + 1, limits) for _, (key, item) in items}
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise EncodeError(f"cannot encode a value of type {type(value).__name__}")


def pack(value: Any, *, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Encode `value` canonically; raise `EncodeError` if it is outside the value model."""
    canonical = _canonical(value, 1, limits)
    data: bytes = msgpack.packb(canonical, use_bin_type=True)
    if len(data) > limits.max_bytes:
        raise EncodeError(f"encoding is {len(data)} bytes, over the {limits.max_bytes}-byte limit")
    return data


def _pairs_to_dict(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, item in pairs:
        if isinstance(key, bool) or not isinstance(key, str | int):
            raise DecodeError(f"map key of type {type(key).__name__} (only str and int allowed)")
        if key in result:
            raise DecodeError(f"duplicate map key {key!r}")
        result[key] = item
    return result


# What a msgpack value's first byte announces, for the header walk (`_scan`).
_FIXINT, _FIXMAP, _FIXARRAY, _FIXSTR, _CONST, _UINT, _INT = range(7)
_BIN, _STR, _ARRAY, _MAP, _FLOAT, _BAD = range(7, 13)


def _kinds() -> tuple[tuple[int, ...], tuple[int, ...]]:
    kind = [_BAD] * 256
    width = [0] * 256  # the width of the int, or of the length field
    for b in range(0x00, 0x80):
        kind[b] = _FIXINT
    for b in range(0xE0, 0x100):
        kind[b] = _FIXINT
    for b in range(0x80, 0x90):
        kind[b] = _FIXMAP
    for b in range(0x90, 0xA0):
        kind[b] = _FIXARRAY
    for b in range(0xA0, 0xC0):
        kind[b] = _FIXSTR
    for b in (0xC0, 0xC2, 0xC3):
        kind[b] = _CONST
    for first, k, widths in (
        (0xCC, _UINT, (1, 2, 4, 8)),
        (0xD0, _INT, (1, 2, 4, 8)),
        (0xC4, _BIN, (1, 2, 4)),
        (0xD9, _STR, (1, 2, 4)),
        (0xDC, _ARRAY, (2, 4)),
        (0xDE, _MAP, (2, 4)),
    ):
        for i, w in enumerate(widths):
            kind[first + i] = k
            width[first + i] = w
    kind[0xCA] = kind[0xCB] = _FLOAT
    return tuple(kind), tuple(width)


_KIND, _WIDTH = _kinds()
_KEY_KINDS: Final = frozenset({_FIXINT, _UINT, _INT, _FIXSTR, _STR})
_KIND_NAMES: Final = (
    *("int", "map", "array", "str", "nil or bool", "int", "int"),
    *("bin", "str", "array", "map", "float", "ext"),
)
# The smallest length each sized form may carry in a canonical encoding (the fix forms hold
# str up to 31 bytes and arrays and maps up to 15 items; bin has no fix form); and for the
# signed ints, the value each form must stay under (pack uses negative fixint down to -32).
_SIZED_MIN: Final = {
    0xC4: 0, 0xC5: 1 << 8, 0xC6: 1 << 16,
    0xD9: 32, 0xDA: 1 << 8, 0xDB: 1 << 16,
    0xDC: 16, 0xDD: 1 << 16,
    0xDE: 16, 0xDF: 1 << 16,
}  # fmt: skip
_INT_BELOW: Final = {2: -(1 << 7), 4: -(1 << 15), 8: -(1 << 31)}


def _scan(data: bytes, limits: Limits, canonical: bool) -> None:
    """Walk the encoding's headers without building anything, refusing early what `unpack`
    must refuse: truncation and trailing bytes, floats and extensions, map keys other than
    str and int, lengths, depth and object count over the limits; and, with `canonical`,
    any header or int wider than needed and map keys not in increasing order of their
    encodings (which also excludes duplicates). One step per object, no allocation beyond a
    stack as deep as the value: the work is bounded by `max_objects` however the bytes are
    arranged, and a bomb is refused at its first excess, before msgpack builds anything.
    """
    n = len(data)
    pos = 0
    objects = 0
    max_objects = limits.max_objects
    max_depth = limits.max_depth
    kinds = _KIND
    widths = _WIDTH
    # The container being walked: items left, whether a map, the encoding of its previous
    # key; the enclosing ones are saved on `stack`. The value itself sits in a pseudo-array
    # of one item.
    left = 1
    in_map = False
    prev_key = b""
    stack: list[tuple[int, bool, bytes]] = []
    while True:
        if pos >= n:
            raise DecodeError("malformed msgpack: incomplete input")
        objects += 1
        if objects > max_objects:
            raise DecodeError(f"more than {max_objects} objects")
        start = pos
        b = data[pos]
        pos += 1
        kind = kinds[b]
        count = 0
        if kind == _FIXINT:
            pass
        elif kind == _FIXARRAY:
            count = b & 0x0F
        elif kind == _FIXMAP:
            count = 2 * (b & 0x0F)
        elif kind == _FIXSTR:
            if b & 0x1F > limits.max_str_len:
                raise DecodeError(f"str of {b & 0x1F} bytes exceeds max_str_len")
            pos += b & 0x1F
        elif kind == _CONST:
            pass
        elif kind in (_UINT, _INT):
            w = widths[b]
            if pos + w > n:
                raise DecodeError("malformed msgpack: incomplete input")
            if canonical:
                if kind == _UINT:
                    small = data[pos] < 0x80 if w == 1 else not any(data[pos : pos + w // 2])
                elif w == 1:
                    small = not 0x80 <= data[pos] < 0xE0
                else:
                    value = int.from_bytes(data[pos : pos + w], "big", signed=True)
                    small = value >= _INT_BELOW[w]
                if small:
                    raise DecodeError("encoding is not canonical: a wider int than needed")
            pos += w
        elif kind <= _MAP:
            w = widths[b]
            if pos + w > n:
                raise DecodeError("malformed msgpack: incomplete input")
            size = int.from_bytes(data[pos : pos + w], "big")
            pos += w
            if canonical and size < _SIZED_MIN[b]:
                raise DecodeError("encoding is not canonical: a wider header than needed")
            if kind == _STR:
                if size > limits.max_str_len:
                    raise DecodeError(f"str of {size} bytes exceeds max_str_len")
                pos += size
            elif kind == _BIN:
                if size > limits.max_bin_len:
                    raise DecodeError(f"bin of {size} bytes exceeds max_bin_len")
                pos += size
            elif kind == _ARRAY:
                count = size
            else:
                count = 2 * size
        elif kind == _FLOAT:
            raise DecodeError("floats are not part of the value model")
        elif b == 0xC1:
            raise DecodeError("malformed msgpack: reserved type byte 0xc1")
        else:
            raise DecodeError(f"malformed msgpack: extension type (byte 0x{b:02x}) refused")
        if in_map and not left & 1:  # a map's key
            if kind not in _KEY_KINDS:
                raise DecodeError(f"map key of type {_KIND_NAMES[kind]} (only str and int allowed)")
            if canonical:
                key = data[start:pos]
                if key <= prev_key:
                    raise DecodeError("encoding is not canonical: map keys out of order")
                prev_key = key
        if count:
            if kind in (_FIXMAP, _MAP):
                if count > 2 * limits.max_map_len:
                    raise DecodeError(f"map of {count // 2} entries exceeds max_map_len")
            elif count > limits.max_array_len:
                raise DecodeError(f"array of {count} elements exceeds max_array_len")
            if len(stack) + 2 > max_depth:
                raise DecodeError(f"value nested deeper than {max_depth} levels")
            stack.append((left, in_map, prev_key))
            left, in_map, prev_key = count, kind in (_FIXMAP, _MAP), b""
            continue
        # A scalar or an empty container is complete, and so may be the containers around it.
        left -= 1
        while not left:
            if not stack:
                if pos > n:
                    raise DecodeError("malformed msgpack: incomplete input")
                if pos < n:
                    raise DecodeError("trailing bytes after the value")
                return
            left, in_map, prev_key = stack.pop()
            left -= 1


def _refuse_ext(code: int, data: bytes) -> Any:
    # max_ext_len=0 stops every extension but the zero-length ones; those end up here.
    raise DecodeError(f"malformed msgpack: extension type {code} ({len(data)} bytes) refused")


def unpack(data: bytes, *, limits: Limits = DEFAULT_LIMITS, canonical: bool = False) -> Any:
    """Decode exactly one value from `data`, enforcing `limits`.

    With `canonical=True`, also reject any encoding other than the one `pack` would produce
    (unsorted keys, non-minimal ints, str8 vs fixstr tricks, ...), so that signed bytes and
    decoded values correspond one to one.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError(f"expected bytes, got {type(data).__name__}")
    if len(data) > limits.max_bytes:
        raise DecodeError(f"{len(data)} bytes, over the {limits.max_bytes}-byte limit")
    if len(data) == 0:
        raise DecodeError("empty input")
    data = bytes(data)
    _scan(data, limits, canonical)
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=False,
            # Canonical keys are distinct (strictly increasing encodings) and of the allowed
            # types (checked by the scan): only a lenient decode needs the per-map check.
            object_pairs_hook=None if canonical else _pairs_to_dict,
            max_str_len=limits.max_str_len,
            max_bin_len=limits.max_bin_len,
            max_array_len=limits.max_array_len,
            max_map_len=limits.max_map_len,
            max_ext_len=0,
            ext_hook=_refuse_ext,
        )
    except DecodeError:
        raise
    except msgpack.ExtraData as exc:
        raise DecodeError("trailing bytes after the value") from exc
    except msgpack.StackError as exc:
        raise DecodeError("value nested too deeply") from exc
    except UnicodeDecodeError as exc:
        raise DecodeError("string is not valid UTF-8") from exc
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as exc:
        raise DecodeError(f"malformed msgpack: {exc}") from exc
    return value
