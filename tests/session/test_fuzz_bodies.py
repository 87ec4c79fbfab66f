"""Signed entries of every kind with bodies of any shape (lists, maps, nesting, wrong types
where keys, set members and indices are read), fed to a peer: a typed refusal at worst, never
another exception, the log unchanged but for an entry the table accepts, and a third party
replaying the log with the entry gets a `LogError` or the same acceptance.

Unsigned or badly signed bytes stop at the signature check; these are signed by a party of the
table under its key in force, at the index and `p` the table expects, so they reach the body
checks, the void bookkeeping (`Ballots`, `Ledger`), and the equivocation comparisons.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_helpers import identities, table

from buraco_p2p.session import LogError, Peer, Refused, Router, bodies, make_entry
from buraco_p2p.session.table import Table

_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.binary(max_size=40),
    st.text(max_size=8),
)  # fmt: skip
_value = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12,
)
_keys = st.sampled_from([
    "silent", "action", "try", "keys", "shares", "n", "c", "key", "m", "totals", "state",
    "secret", "scores", "ms", "deck", "proof", "x",
])
_body = st.dictionaries(_keys, _value, max_size=5)
_void = st.fixed_dictionaries(
    {"action": st.sampled_from(["void", "end", "replace", "x"]) | _value,
     "silent": st.lists(st.integers(-2, 5) | _value, max_size=4) | _value},
    optional={"try": st.integers(-1, 5) | _value, "keys": _value},
)  # fmt: skip


@pytest.fixture(scope="module")
def at_turn() -> Router:
    """Four peers at the first move of the first hand."""
    r = table("us", seed=17)
    r.manual = {0, 1, 2, 3}
    r.start()
    r.run()
    return r


def _feed(peer: Peer, entry_wire: bytes) -> None:
    before = [e.wire for e in peer.log]
    out = peer.receive(entry_wire, 0.0)
    after = [e.wire for e in peer.log]
    assert after[: len(before)] == before
    for ev in out.events:
        if isinstance(ev, Refused):
            assert isinstance(ev.error, LogError)


@settings(max_examples=40)  # the simulator sends garbage too, in every default run
@given(kind=st.sampled_from([*bodies.KINDS, "nope"]), body=_body | _void, ahead=st.integers(0, 3),
       author=st.integers(0, 3), stale=st.booleans())  # fmt: skip
def test_a_signed_entry_of_any_shape_gets_a_typed_answer(
    at_turn: Router, kind: str, body: dict[str, Any], ahead: int, author: int, stale: bool
) -> None:
    peer = copy.deepcopy(at_turn.peers[0], {id(k): k for k in at_turn.peers[0].table.terms.keys}
                         | {id(at_turn.peers[0].identity): at_turn.peers[0].identity})  # fmt: skip
    t = peer.table
    index = len(t.log) + ahead if not stale else max(1, len(t.log) - 1 - ahead)
    prev = t.void_prev() if not stale else t.log[index].prev
    e = make_entry(identities()[author], table=t.terms.table_id, index=index, prev=prev,
                   author=author, kind=kind, body=body)  # fmt: skip
    _feed(peer, e.wire)
    peer.run(0.0)
    verifier = Table(t.log[0])
    for x in t.log[1:]:
        verifier.apply(x)
    with contextlib.suppress(LogError):
        verifier.apply(e)
