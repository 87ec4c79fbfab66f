"""Commit-reveal joint randomness and unbiased draws."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.crypto.errors import CommitmentMismatch, CommitRevealError
from buraco_p2p.crypto.group import DeterministicRandomSource
from buraco_p2p.crypto.randomness import (
    CoinContext,
    CommitReveal,
    DrawStream,
    combine,
    commitment,
    new_nonce,
    permutation,
    uniform_choice,
    uniform_int,
    verify_reveal,
)

CTX = CoinContext(table_id=b"table", purpose=b"seats", round=0)


def lp(b: bytes) -> bytes:
    return len(b).to_bytes(4, "big") + b


def nonces(n: int, seed: bytes = b"nonces") -> list[bytes]:
    rng = DeterministicRandomSource(seed)
    return [new_nonce(rng) for _ in range(n)]


def test_commitment_follows_the_spec() -> None:
    nonce = bytes(range(32))
    expected = hashlib.sha512(
        lp(b"buraco-p2p/commit/v1")
        + lp(b"table")
        + lp(b"seats")
        + (0).to_bytes(8, "big")
        + (2).to_bytes(4, "big")
        + lp(nonce)
    ).digest()[:32]
    assert commitment(CTX, 2, nonce) == expected


def test_reveal_verification_names_the_party() -> None:
    n = nonces(1)[0]
    c = commitment(CTX, 1, n)
    verify_reveal(CTX, 1, n, c)
    with pytest.raises(CommitmentMismatch) as e:
        verify_reveal(CTX, 1, bytes(32), c)
    assert e.value.party == 1
    with pytest.raises(CommitmentMismatch):
        verify_reveal(CTX, 1, n[:31], c)


@pytest.mark.parametrize("change", [{"table_id": b"other"}, {"purpose": b"dealer"}, {"round": 1}])
def test_commitment_binds_the_context(change: dict[str, object]) -> None:
    n = nonces(1)[0]
    other = dataclasses.replace(CTX, **change)  # type: ignore[arg-type]
    with pytest.raises(CommitmentMismatch):
        verify_reveal(other, 0, n, commitment(CTX, 0, n))


def test_a_copied_commitment_cannot_be_opened_by_the_copier() -> None:
    n = nonces(1)[0]
    c0 = commitment(CTX, 0, n)
    with pytest.raises(CommitmentMismatch) as e:
        verify_reveal(CTX, 1, n, c0)
    assert e.value.party == 1


def run_round(ns: list[bytes], order: list[int]) -> bytes:
    cr = CommitReveal(CTX, len(ns))
    for p in order:
        cr.add_commitment(p, commitment(CTX, p, ns[p]))
    assert cr.all_committed
    for p in reversed(order):
        assert not cr.done
        cr.add_reveal(p, ns[p])
    assert cr.done and cr.missing_reveals == ()
    return cr.seed()


def test_full_round_seed_is_combine_of_nonces_in_party_order() -> None:
    ns = nonces(4)
    seed = run_round(ns, [2, 0, 3, 1])
    assert seed == run_round(ns, [0, 1, 2, 3])
    assert seed == combine(CTX, ns)
    expected = hashlib.sha512(
        lp(b"buraco-p2p/coin/v1")
        + lp(b"table")
        + lp(b"seats")
        + (0).to_bytes(8, "big")
        + (4).to_bytes(4, "big")
        + b"".join(ns)
    ).digest()[:32]
    assert seed == expected


def test_each_nonce_and_its_position_matter() -> None:
    ns = nonces(4)
    base = combine(CTX, ns)
    for i in range(4):
        changed = list(ns)
        changed[i] = bytes(32)
        assert combine(CTX, changed) != base
    assert combine(CTX, [ns[1], ns[0], *ns[2:]]) != base
    assert combine(dataclasses.replace(CTX, round=9), ns) != base
    with pytest.raises(ValueError):
        combine(CTX, [])
    with pytest.raises(CommitmentMismatch) as e:
        combine(CTX, [ns[0], b"short"])
    assert e.value.party == 1


def test_round_ordering_rules() -> None:
    ns = nonces(3)
    cr = CommitReveal(CTX, 3)
    cr.add_commitment(0, commitment(CTX, 0, ns[0]))
    with pytest.raises(CommitRevealError):
        cr.add_reveal(0, ns[0])  # not everyone has committed yet
    with pytest.raises(CommitRevealError):
        cr.add_commitment(0, commitment(CTX, 0, ns[0]))
    with pytest.raises(ValueError):
        cr.add_commitment(3, commitment(CTX, 3, ns[0]))
    with pytest.raises(CommitmentMismatch):
        cr.add_commitment(1, b"short")
    cr.add_commitment(1, commitment(CTX, 1, ns[1]))
    cr.add_commitment(2, commitment(CTX, 2, ns[2]))
    with pytest.raises(CommitmentMismatch) as e:
        cr.add_reveal(2, ns[1])
    assert e.value.party == 2
    cr.add_reveal(2, ns[2])
    with pytest.raises(CommitRevealError):
        cr.add_reveal(2, ns[2])
    assert cr.missing_reveals == (0, 1)
    with pytest.raises(CommitRevealError):
        cr.seed()
    with pytest.raises(ValueError):
        CommitReveal(CTX, 0)


def test_draw_stream_follows_the_spec() -> None:
    seed = b"\x07" * 32
    block0 = hashlib.sha512(
        lp(b"buraco-p2p/stream/v1") + lp(seed) + lp(b"cut") + (0).to_bytes(8, "big")
    ).digest()
    # below(100): k = 7 bits from one byte at a time, accept if < 100
    expected = None
    for byte in block0:
        if (byte & 0x7F) < 100:
            expected = byte & 0x7F
            break
    assert expected is not None
    assert DrawStream(seed, b"cut").below(100) == expected
    assert uniform_int(seed, 5, 104, label=b"cut") == 5 + expected


def test_stream_crosses_block_boundaries() -> None:
    s = DrawStream(b"seed")
    first = [s.below(2**64) for _ in range(20)]  # 160 bytes: three blocks
    again = DrawStream(b"seed")
    assert [again.below(2**64) for _ in range(20)] == first
    assert len(set(first)) == 20


@given(st.binary(min_size=32, max_size=32), st.integers(min_value=0, max_value=60))
def test_permutation_is_a_permutation(seed: bytes, n: int) -> None:
    p = permutation(seed, n)
    assert sorted(p) == list(range(n))
    assert p == permutation(seed, n)


@given(st.binary(min_size=1, max_size=32), st.integers(-50, 50), st.integers(0, 300))
def test_uniform_int_in_range(seed: bytes, lo: int, width: int) -> None:
    v = uniform_int(seed, lo, lo + width)
    assert lo <= v <= lo + width


def test_draws_are_unbiased() -> None:
    # 6000 seeds: every permutation of 3 and every choice among 3 appears about equally often.
    # A biased "mod 3" draw over one byte would skew these by about 1/256 per outcome; a gross
    # bug (never rejecting, off-by-one range) would put an outcome far outside +-5 sigma.
    perms: Counter[tuple[int, ...]] = Counter()
    choices: Counter[int] = Counter()
    for i in range(6000):
        seed = i.to_bytes(4, "big")
        perms[tuple(permutation(seed, 3))] += 1
        choices[uniform_choice(seed, 3, label=b"dealer")] += 1
    assert len(perms) == 6
    assert all(abs(c - 1000) < 150 for c in perms.values()), perms
    assert all(abs(c - 2000) < 200 for c in choices.values()), choices


def test_labels_separate_draws() -> None:
    seed = b"s" * 32
    assert permutation(seed, 20, label=b"a") != permutation(seed, 20, label=b"b")
    assert permutation(seed, 20, label=b"a") == permutation(seed, 20, label=b"a")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        uniform_int(b"s", 5, 4)
    with pytest.raises(ValueError):
        uniform_choice(b"s", 0)
    with pytest.raises(ValueError):
        permutation(b"s", -1)
    assert uniform_choice(b"s", 1) == 0
    assert permutation(b"s", 1) == [0]
    with pytest.raises(ValueError):
        CoinContext(b"t", b"p", -1)
    with pytest.raises(TypeError):
        CoinContext("t", b"p", 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        commitment(CTX, -1, bytes(32))
