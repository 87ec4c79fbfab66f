"""Every error type of the pure layers, and a hand state holding cached ones, survive copy,
deepcopy and pickle (a session may snapshot its state either way)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import pytest
from engine_helpers import draw, slots_of, table_for

from buraco_p2p.cards import CardParseError
from buraco_p2p.codec import DecodeError, EncodeError
from buraco_p2p.engine import IllegalMove, IllegalMoveCode, LayDown, RevealError, legal_moves
from buraco_p2p.engine.oracle import clear_public_melds
from buraco_p2p.rules import IllegalMeld, RuleError, RuleOverrideError

COPIES: list[Callable[[object], object]] = [
    copy.copy,
    copy.deepcopy,
    lambda x: pickle.loads(pickle.dumps(x)),
]

ERRORS: list[BaseException] = [
    IllegalMeld("too_short", "a meld needs three cards"),
    IllegalMove(IllegalMoveCode.NOT_HELD, "slot 9 is not in your hand", 2),
    IllegalMove(IllegalMoveCode.BAD_WIRE, "garbage"),
    RevealError("slot 3 already holds card 4"),
    RuleError("no such preset"),
    RuleOverrideError("bad value", key="target_score", value=-1),
    CardParseError("not a card: XX"),
    DecodeError("truncated"),
    EncodeError("float"),
]


@pytest.mark.parametrize("dup", COPIES)
@pytest.mark.parametrize("err", ERRORS, ids=lambda e: type(e).__name__)
def test_error_types_copy_and_pickle(err: BaseException, dup: Callable[[object], object]) -> None:
    got = dup(err)
    assert type(got) is type(err)
    assert str(got) == str(err)
    assert got.args == err.args
    assert vars(got) == vars(err)


def test_a_hand_state_with_cached_refusals_copies_and_pickles() -> None:
    clear_public_melds()  # a refusal the shared cache holds would not be cached privately
    t = table_for("us", hands={1: "3S 5S 9H KS KH KD"})
    draw(t)
    ref = t.referee
    bad = slots_of(ref, 1, "3S 5S 9H")
    with pytest.raises(IllegalMove):
        ref.push(LayDown(1, (bad,)))
    assert any(isinstance(r, IllegalMeld) for r in ref.oracle._eval.values())
    for dup in COPIES:
        twin = dup(ref)
        assert isinstance(twin, type(ref))
        assert twin.state_hash() == ref.state_hash()
        with pytest.raises(IllegalMove) as e:
            twin.push(LayDown(1, (bad,)))
        assert e.value.code is IllegalMoveCode.ILLEGAL_MELD
        assert legal_moves(twin) == legal_moves(ref)
