"""The shared msgpack codec: round trips, canonical form, limits and hostile encodings."""

from __future__ import annotations

import struct
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p import codec
from buraco_p2p.codec import DecodeError, EncodeError, Limits, pack, unpack

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.text(max_size=40)
    | st.binary(max_size=40)
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=6)
        | st.dictionaries(st.text(max_size=8) | st.integers(-1000, 1000), children, max_size=6)
    ),
    max_leaves=30,
)


@given(values)
def test_round_trip_and_canonical(value: Any) -> None:
    data = pack(value)
    assert unpack(data) == value
    assert unpack(data, canonical=True) == value
    assert pack(unpack(data)) == data


@given(
    st.dictionaries(
        st.text(max_size=6) | st.integers(-50, 50), st.integers(-(2**63), 2**63), max_size=10
    )
)
def test_encoding_does_not_depend_on_insertion_order(mapping: dict[Any, int]) -> None:
    reversed_mapping = dict(reversed(list(mapping.items())))
    assert pack(mapping) == pack(reversed_mapping)


def test_tuples_encode_as_lists_and_bytes_stay_bytes() -> None:
    assert unpack(pack((1, b"\x00\xff", "x"))) == [1, b"\x00\xff", "x"]
    assert isinstance(unpack(pack(b"ab")), bytes)
    assert isinstance(unpack(pack("ab")), str)


@pytest.mark.parametrize(
    "value",
    [1.5, {1.0: 2}, {(1, 2): 3}, {True: 1}, {1, 2}, object(), 2**64, -(2**63) - 1, {b"k": 1}],
)
def test_values_outside_the_model_are_refused(value: Any) -> None:
    with pytest.raises(EncodeError):
        pack(value)


def test_pack_refuses_over_deep_values() -> None:
    limits = Limits(max_depth=4)
    pack([[[1]]], limits=limits)
    with pytest.raises(EncodeError, match="deeper"):
        pack([[[[1]]]], limits=limits)


def test_non_canonical_encodings_rejected_only_when_asked() -> None:
    unsorted = b"\x82\xa1b\x01\xa1a\x02"  # {"b": 1, "a": 2}
    wide_int = b"\xcd\x00\x05"  # 5 as uint16
    for data in (unsorted, wide_int):
        unpack(data)
        with pytest.raises(DecodeError, match="canonical"):
            unpack(data, canonical=True)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "empty"),
        (b"\xc1", "malformed"),  # never-used type byte
        (b"\x92\x01", "malformed"),  # array of 2 with 1 element
        (b"\xc0\xc0", "trailing"),
        (msgpack.packb(1.5), "float"),
        (b"\xd6\xff\x00\x00\x00\x00", "malformed"),  # timestamp extension type
        (b"\xc7\x01\x05\x00", "malformed"),  # ext 8
        (b"\xa2\xff\xfe", "UTF-8"),
        (b"\x81\xc3\x01", "map key"),  # {True: 1}
        (b"\x81\xc4\x01k\x01", "map key"),  # {b"k": 1}
        (b"\x81\x91\x01\x01", "map key|malformed"),  # {[1]: 1}
        (b"\x82\x01\x02\x01\x03", "duplicate"),
    ],
)
def test_malformed_and_banned_encodings(data: bytes, why: str) -> None:
    with pytest.raises(DecodeError, match=why):
        unpack(data)


@pytest.mark.parametrize(
    "bomb",
    [
        b"\xdd\xff\xff\xff\xff",  # array of 2**32-1 elements
        b"\xdf\xff\xff\xff\xff",  # map of 2**32-1 pairs
        b"\xdb\xff\xff\xff\xff" + b"x" * 10,  # str of 4 GiB
        b"\xc6\xff\xff\xff\xff" + b"x" * 10,  # bin of 4 GiB
        b"\x91" * 100_000 + b"\xc0",  # 100k nested arrays
        b"\x81\xa1k" * 50_000 + b"\xc0",  # 50k nested maps
    ],
)
def test_msgpack_bombs_fail_fast(bomb: bytes) -> None:
    with pytest.raises(DecodeError):
        unpack(bomb)


def test_each_limit_is_enforced_and_only_past_it() -> None:
    limits = Limits(
        max_bytes=200,
        max_str_len=5,
        max_bin_len=5,
        max_array_len=3,
        max_map_len=2,
        max_depth=3,
    )
    ok = {"s": "abcde", "b": b"12345"}
    assert unpack(pack(ok), limits=limits) == ok
    assert unpack(pack([[1, 2, 3]]), limits=limits) == [[1, 2, 3]]
    too_much = [
        pack("abcdef"),
        pack(b"123456"),
        pack([1, 2, 3, 4]),
        pack({"a": 1, "b": 2, "c": 3}),
        pack([[[[1]]]]),
        pack(b"x" * 300),
    ]
    for data in too_much:
        with pytest.raises(DecodeError):
            unpack(data, limits=limits)


def test_depth_limit_counts_maps_and_arrays() -> None:
    limits = Limits(max_depth=3)
    assert unpack(pack({"a": [1]}), limits=limits) == {"a": [1]}
    with pytest.raises(DecodeError, match="deeper"):
        unpack(pack({"a": [{"b": 1}]}), limits=limits)


def test_default_limits_accept_a_large_legitimate_message() -> None:
    deck = [[bytes(32), bytes(32)] for _ in range(108)]
    message = {"kind": "shuffle", "deck": deck, "proof": [bytes(32)] * 1000}
    assert unpack(pack(message), canonical=True) == message


def test_decode_error_is_a_value_error() -> None:
    assert issubclass(DecodeError, ValueError)
    assert issubclass(codec.EncodeError, ValueError)


def test_wide_declared_length_header_only() -> None:
    header_only = b"\xdb" + struct.pack(">I", 1 << 20)
    with pytest.raises(DecodeError):
        unpack(header_only)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Limits(max_depth=0)


# ---------------------------------------------------------------- object count, depth, canonical


def test_the_object_count_is_bounded() -> None:
    limits = Limits(max_objects=10)
    assert unpack(pack([[]] * 9), limits=limits) == [[]] * 9  # 10 objects
    with pytest.raises(DecodeError, match="objects"):
        unpack(pack([[]] * 10), limits=limits)
    assert unpack(pack({"a": 1, "b": [2, 3]}), limits=Limits(max_objects=7))
    with pytest.raises(DecodeError, match="objects"):
        unpack(pack({"a": 1, "b": [2, 3]}), limits=Limits(max_objects=6))


@pytest.mark.parametrize("canonical", [False, True])
def test_a_megabyte_of_empty_containers_is_refused_by_count(canonical: bool) -> None:
    for empty in (b"\x90", b"\x80"):
        # 65 arrays of 16,000 empty arrays (or maps): each within max_array_len, about
        # 1 MiB in all, over a million objects.
        inner = b"\xdc" + struct.pack(">H", 16_000) + empty * 16_000
        frame = b"\xdc" + struct.pack(">H", 65) + inner * 65
        assert len(frame) <= codec.DEFAULT_LIMITS.max_bytes
        with pytest.raises(DecodeError, match="objects"):
            unpack(frame, canonical=canonical)


def test_depth_is_checked_while_walking_not_after() -> None:
    # The value is cut short after its 40th level: the depth is refused first.
    with pytest.raises(DecodeError, match="deeper"):
        unpack(b"\x91" * 40 + b"\xc1")
    with pytest.raises(DecodeError, match="malformed"):
        unpack(b"\x91" * 20 + b"\xc1")


@pytest.mark.parametrize(
    "data",
    [
        b"\xd9\x01a",  # "a" as str8
        b"\xda\x00\x01a",  # "a" as str16
        b"\xc5\x00\x01a",  # b"a" as bin16
        b"\xdc\x00\x01\x01",  # [1] as array16
        b"\xde\x00\x01\x01\x01",  # {1: 1} as map16
        b"\xcc\x05",  # 5 as uint8
        b"\xd0\x05",  # 5 as int8
        b"\xd0\xff",  # -1 as int8
        b"\xd1\xff\x80",  # -128 as int16
        b"\xcf" + (1).to_bytes(8, "big"),  # 1 as uint64
        b"\x82\x02\x01\x01\x01",  # {2: 1, 1: 1}: keys out of order
        b"\x82\x01\x01\x01\x02",  # {1: 1, 1: 2}: a duplicate key
        b"\x82\xa1a\x01\x01\x01",  # {"a": 1, 1: 1}: str sorts after int
    ],
)
def test_every_non_canonical_form_is_refused_when_asked(data: bytes) -> None:
    with pytest.raises(DecodeError):
        unpack(data, canonical=True)


def _reference_unpack(data: bytes, canonical: bool) -> object:
    """The decode as it was specified before the header walk: build, then check the value
    model and depth, then re-encode to compare (canonical)."""

    def pairs(items: list[tuple[Any, Any]]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, v in items:
            if isinstance(k, bool) or not isinstance(k, str | int) or k in out:
                raise ValueError("key")
            out[k] = v
        return out

    def ext(code: int, payload: bytes) -> Any:
        raise ValueError("ext")

    value = msgpack.unpackb(
        data,
        raw=False,
        strict_map_key=False,
        object_pairs_hook=pairs,
        ext_hook=ext,
        max_ext_len=0,
    )
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > codec.DEFAULT_LIMITS.max_depth or isinstance(item, float):
            raise ValueError("depth or float")
        if isinstance(item, list):
            stack.extend((x, depth + 1) for x in item)
        elif isinstance(item, dict):
            stack.extend((x, depth + 1) for x in item.values())
    if canonical and pack(value) != data:
        raise ValueError("not canonical")
    return value


def _outcome(fn: Any, data: bytes, canonical: bool) -> object:
    try:
        return ("ok", fn(data, canonical))
    except Exception:  # any refusal is the same outcome here
        return "refused"


@given(values, st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3))
def test_the_header_walk_agrees_with_decoding_then_re_encoding(
    value: Any, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(msgpack.packb(value, use_bin_type=True))  # keys in insertion order
    for at, byte in edits:
        data[at % len(data)] = byte
    frame = bytes(data)
    for canonical in (False, True):
        want = _outcome(_reference_unpack, frame, canonical)
        got = _outcome(lambda d, c: unpack(d, canonical=c), frame, canonical)
        assert got == want, (frame, canonical)
