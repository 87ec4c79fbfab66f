"""Fiat-Shamir transcripts: byte-exact framing, context binding, no ambiguity."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.crypto.group import BASE, Point, Scalar
from buraco_p2p.crypto.transcript import ProofContext, Transcript

CTX = ProofContext(table_id=b"table-1", hand=3, log_index=17, prover=b"alice")
LABEL = b"buraco-p2p/test/v1"


def frame(op: int, label: bytes, data: bytes) -> bytes:
    return bytes([op]) + struct.pack(">I", len(label)) + label + struct.pack(">I", len(data)) + data


def test_challenge_is_sha512_of_the_specified_frames() -> None:
    t = Transcript.for_context(LABEL, CTX)
    p = Point.base_mul(Scalar.from_int(3))
    t.append(b"point", p)
    t.append(b"n", 7)
    t.append(b"raw", b"xyz")
    c = t.challenge(b"c")
    expected = hashlib.sha512(
        frame(0, b"protocol", LABEL)
        + frame(0, b"table_id", b"table-1")
        + frame(0, b"hand", (3).to_bytes(8, "big"))
        + frame(0, b"log_index", (17).to_bytes(8, "big"))
        + frame(0, b"prover", b"alice")
        + frame(1, b"point", p.to_bytes())
        + frame(1, b"n", (7).to_bytes(8, "big"))
        + frame(1, b"raw", b"xyz")
        + frame(2, b"c", b"")
    ).digest()
    assert c == Scalar.from_hash(expected)


def test_same_inputs_same_challenge() -> None:
    def run() -> Scalar:
        t = Transcript.for_context(LABEL, CTX)
        t.append(b"x", BASE)
        return t.challenge(b"c")

    assert run() == run()


@pytest.mark.parametrize(
    "other",
    [
        ProofContext(table_id=b"table-2", hand=3, log_index=17, prover=b"alice"),
        ProofContext(table_id=b"table-1", hand=4, log_index=17, prover=b"alice"),
        ProofContext(table_id=b"table-1", hand=3, log_index=18, prover=b"alice"),
        ProofContext(table_id=b"table-1", hand=3, log_index=17, prover=b"bob"),
    ],
)
def test_every_context_field_changes_the_challenge(other: ProofContext) -> None:
    a = Transcript.for_context(LABEL, CTX)
    b = Transcript.for_context(LABEL, other)
    assert a.challenge(b"c") != b.challenge(b"c")


def test_protocol_label_changes_the_challenge_and_must_be_namespaced() -> None:
    a = Transcript.for_context(LABEL, CTX)
    b = Transcript.for_context(b"buraco-p2p/other/v1", CTX)
    assert a.challenge(b"c") != b.challenge(b"c")
    with pytest.raises(ValueError):
        Transcript.for_context(b"other-protocol", CTX)


def test_framing_is_unambiguous() -> None:
    def ch(*items: tuple[bytes, bytes]) -> Scalar:
        t = Transcript.for_context(LABEL, CTX)
        for label, data in items:
            t.append(label, data)
        return t.challenge(b"c")

    assert ch((b"ab", b"c")) != ch((b"a", b"bc"))
    assert ch((b"a", b"bc")) != ch((b"a", b"b"), (b"", b"c"))
    assert ch((b"x", b"")) != ch()
    # the context can't be extended into the data either
    t1 = Transcript(LABEL, table_id=b"ab", hand=0, log_index=0, prover=b"")
    t2 = Transcript(LABEL, table_id=b"a", hand=0, log_index=0, prover=b"b")
    assert t1.challenge(b"c") != t2.challenge(b"c")


def test_successive_challenges_differ_and_depend_on_order() -> None:
    t = Transcript.for_context(LABEL, CTX)
    c1, c2 = t.challenge(b"c"), t.challenge(b"c")
    assert c1 != c2
    t2 = Transcript.for_context(LABEL, CTX)
    assert t2.challenges(b"c", 2) == [c1, c2]
    a = Transcript.for_context(LABEL, CTX)
    a.append(b"x", b"1")
    a.append(b"y", b"2")
    b = Transcript.for_context(LABEL, CTX)
    b.append(b"y", b"2")
    b.append(b"x", b"1")
    assert a.challenge(b"c") != b.challenge(b"c")


def test_challenge_bytes_and_challenge_agree() -> None:
    a = Transcript.for_context(LABEL, CTX)
    b = Transcript.for_context(LABEL, CTX)
    assert Scalar.from_hash(a.challenge_bytes(b"c")) == b.challenge(b"c")


def test_fork_is_independent_and_labelled() -> None:
    t = Transcript.for_context(LABEL, CTX)
    t.append(b"x", b"1")
    before = t.copy().challenge(b"c")
    f1, f2, g = t.fork(b"a"), t.fork(b"a"), t.fork(b"b")
    c1 = f1.challenge(b"c")
    assert c1 == f2.challenge(b"c")
    assert c1 != g.challenge(b"c")
    assert c1 != before
    f1.append(b"more", b"data")
    assert t.challenge(b"c") == before  # parent untouched by the fork or its use


def test_item_encodings() -> None:
    s = Scalar.from_int(5)
    p = BASE
    a = Transcript.for_context(LABEL, CTX)
    a.append(b"v", [p, s])
    b = Transcript.for_context(LABEL, CTX)
    b.append(b"v", p.to_bytes() + s.to_bytes())
    assert a.challenge(b"c") == b.challenge(b"c")
    t = Transcript.for_context(LABEL, CTX)
    for bad in (-1, 2**64):
        with pytest.raises(ValueError):
            t.append(b"n", bad)
    with pytest.raises(TypeError):
        t.append(b"b", True)
    with pytest.raises(TypeError):
        t.append(b"s", "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        t.append(b"l", [1, 2])  # type: ignore[list-item]


def test_context_validation() -> None:
    with pytest.raises(ValueError):
        ProofContext(table_id=b"t", hand=-1, log_index=0, prover=b"p")
    with pytest.raises(ValueError):
        ProofContext(table_id=b"t", hand=0, log_index=2**64, prover=b"p")
    with pytest.raises(TypeError):
        ProofContext(table_id="t", hand=0, log_index=0, prover=b"p")  # type: ignore[arg-type]


@given(
    st.lists(st.tuples(st.binary(max_size=8), st.binary(max_size=8)), max_size=4),
    st.lists(st.tuples(st.binary(max_size=8), st.binary(max_size=8)), max_size=4),
)
def test_distinct_item_lists_give_distinct_challenges(
    xs: list[tuple[bytes, bytes]], ys: list[tuple[bytes, bytes]]
) -> None:
    def ch(items: list[tuple[bytes, bytes]]) -> Scalar:
        t = Transcript.for_context(LABEL, CTX)
        for label, data in items:
            t.append(label, data)
        return t.challenge(b"c")

    assert (ch(xs) == ch(ys)) == (xs == ys)
