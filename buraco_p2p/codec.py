"""The one msgpack codec every layer uses for bytes that cross a trust boundary.

Two jobs, both about untrusted or signed bytes:

* Decoding enforces explicit limits (total size, string/bin/array/map lengths, nesting depth,
  plain types only) *before* anything large is allocated, so a peer cannot make us build a
  huge or deeply nested object from a few bytes ("msgpack bomb"). Every failure is a
  `DecodeError`, never a bare `ValueError`/`KeyError` from deep inside msgpack.
* Encoding is canonical: map keys are ordered by their own encoding, ints use their shortest
  form, no floats, no extension types. The same value always gives the same bytes, so a hash or
  a signature over an encoding is stable across peers and implementations. `unpack(...,
  canonical=True)` additionally refuses any encoding that is not the canonical one, so a signed
  message has exactly one byte representation.

The value model is deliberately small: None, bool, int (-2**63 .. 2**64-1), str (UTF-8), bytes,
list (tuples encode as lists) and dict with str or int keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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

    def __post_init__(self) -> None:
        for name in (
            "max_bytes",
            "max_str_len",
            "max_bin_len",
            "max_array_len",
            "max_map_len",
            "max_depth",
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


def _check_depth(value: Any, limits: Limits) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limits.max_depth:
            raise DecodeError(f"value nested deeper than {limits.max_depth} levels")
        if isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, float):
            raise DecodeError("floats are not part of the value model")


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
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=False,
            object_pairs_hook=_pairs_to_dict,
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
    _check_depth(value, limits)
    if canonical:
        try:
            again = pack(value, limits=limits)
        except EncodeError as exc:  # pragma: no cover - _check_depth covers the value model
            raise DecodeError(str(exc)) from exc
        if again != bytes(data):
            raise DecodeError("encoding is not canonical")
    return value
