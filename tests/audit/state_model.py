"""docs/protocol.md 4.9 read independently: what a move does to the lists of the public state.

`check_step(before, move, after)` checks, from the spec text alone (no buraco_p2p import), that
the public state `after` a move follows from the one `before` it: the hand, stock, pile and meld
lists change exactly as 4.9 says, public cards only grow and stay sorted, and the hash is
SHA-256 of the canonical encoding. The rules' own judgements (is a meld legal, who takes which
pot, the summary of a meld) are taken from `after`, not recomputed.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack

STATE_FIELDS = 21


def state_hash(state: list[Any]) -> bytes:
    # The state holds only arrays, ints, booleans, str and bin: msgpack-python's shortest forms
    # are the canonical encoding of 2.1 for those.
    return hashlib.sha256(msgpack.packb(state, use_bin_type=True)).digest()


def _without(hand: list[int], gone: list[int]) -> list[int]:
    leaving = set(gone)
    return [s for s in hand if s not in leaving]


def _split_laydown(wire: list[int]) -> list[list[int]]:
    n, pos, melds = wire[2], 3, []
    for _ in range(n):
        length = wire[pos]
        melds.append(wire[pos + 2 : pos + 2 + length])
        pos += 2 + length
    assert pos == len(wire)
    return melds


def check_shape(state: list[Any], seats: int) -> None:
    assert len(state) >= STATE_FIELDS
    assert state[0] == 1
    assert isinstance(state[1], bytes) and len(state[1]) == 32
    dealer, scores, cut, hand = state[2]
    assert 0 <= dealer < seats and len(scores) in (2, 3) and (cut == -1 or cut > 0) and hand >= 0
    assert sorted(s for side in state[19] for s in side) == list(range(seats))
    assert state[4] in ("draw", "first_choice", "play", "ended")
    assert len(state[6]) == seats
    public = state[15]
    assert [p[0] for p in public] == sorted({p[0] for p in public})
    assert all(isinstance(f, bool) for f in (*state[11], *state[13], state[16][3]))
    assert state[17][0] in ("", "went_out", "stock_exhausted")
    # Every slot is in exactly one place (pots untaken or not yet the stock excepted).
    placed = [s for h in state[6] for s in h] + state[7] + state[8]
    placed += [s for team in state[12] for meld in team for s in meld[0]]
    assert len(placed) == len(set(placed))


def check_step(before: list[Any], wire: list[int], after: list[Any], seats: int = 4) -> None:
    check_shape(after, seats)
    kind, seat = wire[0], wire[1]
    team = _side(before, seat)
    if after[20] != before[20]:
        _check_side_change(before, after, seat)
    # The mover's melds before the move, and where they stand after it (a side change renumbers
    # the sides; the mover is then the seat that plays alone, whose melds stay its own).
    melds_b, melds_a = before[12][team], after[12][_side(after, seat)]
    hands_b, hands_a = before[6], after[6]
    for other in range(seats):
        if other != seat:
            assert hands_a[other] == hands_b[other], f"seat {other}'s hand changed"
    pub_b = {s: c for s, c in before[15]}
    pub_a = {s: c for s, c in after[15]}
    assert all(pub_a.get(s) == c for s, c in pub_b.items()), "a public card changed or vanished"
    hand = hands_a[seat]
    if kind == 0:  # draw: the stock's last element joins the hand
        assert hand == [*hands_b[seat], before[7][-1]]
        if len(before[7]) > 1:
            assert after[7] == before[7][:-1]
        elif after[7]:  # an untaken pot became the stock, lowest slot on top
            assert after[7] == sorted(after[7], reverse=True) and -2 in after[9]
        assert after[8] == before[8]
        return
    if kind == 1:  # take the pile: appended bottom to top, the pile empties
        assert hand == [*hands_b[seat], *before[8]] and after[8] == []
        assert after[7] == before[7]
        assert all(s in pub_a for s in wire[2:])
        return
    if kind == 2:  # turn up the first card: it goes to the pile, the next stock card to the hand
        first = before[16][0]
        assert first >= 0 and after[8] == [*before[8], first] and first in pub_a
        assert hand == [*_without(hands_b[seat], [first]), before[7][-1]]
        return
    if kind == 3:
        melds = _split_laydown(wire)
        shown = [s for m in melds for s in m]
        assert all(s in pub_a for s in shown)
        old = melds_b
        if melds_a == old:  # under the opening minimum: shown, kept in the hand
            assert hand == hands_b[seat]
            return
        assert melds_a[: len(old)] == old
        laid = [m[0] for m in melds_a[len(old) :]]
        # Melds shown earlier in the turn to open (element 18) go down first.
        earlier = [m[0] for m in before[18]]
        assert laid == earlier + melds
        _check_left(hands_b[seat], [s for m in laid for s in m], hand, before, after)
        return
    if kind == 4:
        index, added = wire[2], wire[4:]
        assert melds_a[index][0] == melds_b[index][0] + added
        assert all(s in pub_a for s in added)
        _check_left(hands_b[seat], added, hand, before, after)
        return
    if kind == 5:
        slot = wire[2]
        assert after[8] == [*before[8], slot] and slot in pub_a
        _check_left(hands_b[seat], [slot], hand, before, after)
        return
    raise AssertionError(f"unknown move kind {kind}")


def _side(state: list[Any], seat: int) -> int:
    return next(i for i, side in enumerate(state[19]) if seat in side)


def _check_side_change(before: list[Any], after: list[Any], seat: int) -> None:
    """4.9 element 20: at three seats, once, the mover took the first pot and plays alone; the
    two others become one side whose melds are the lower seat's, then the other's."""
    assert before[20] == [] and len(before[19]) == 3
    solo, partners, turn = after[20]
    assert solo == seat and sorted(partners) == list(partners) and seat not in partners
    assert turn == before[5] and sorted([[solo], list(partners)]) == after[19]
    merged = [m for p in partners for m in before[12][_side(before, p)]]
    assert [m[0] for m in after[12][_side(after, partners[0])]] == [m[0] for m in merged]


def _check_left(
    old: list[int], gone: list[int], hand: list[int], before: list[Any], after: list[Any]
) -> None:
    """The hand keeps its other cards in order; an emptied hand may take a pot, appended in
    increasing slot order."""
    kept = _without(old, gone)
    assert hand[: len(kept)] == kept
    extra = hand[len(kept) :]
    if extra:
        assert not kept and extra == sorted(extra)
        assert before[10] != after[10], "a hand grew without taking a pot"
