"""Tables of two, three and six: everything comes from the genesis' identities and the rules'
`players`."""

from __future__ import annotations

import dataclasses

import pytest
from session_helpers import bot_chooser, identities

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.rules import RuleSet, get_preset
from buraco_p2p.session import Peer, Router, make_genesis, replay


def _rules(n: int) -> RuleSet:
    rules = get_preset("classic").with_overrides({"players": n})
    return dataclasses.replace(rules, target_score=300)


@pytest.mark.parametrize("n", [2, 3, 6])
def test_a_match_at_other_seat_counts(n: int) -> None:
    rules = _rules(n)
    g = make_genesis(b"n-seat-test-tabl", identities(n), rules)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([5, k]) * 16)) for k, i in
             enumerate(identities(n))]  # fmt: skip
    r = Router(peers, bot_chooser(5))
    r.start()
    r.run()
    assert all(p.table.closed for p in peers)
    logs = {tuple(e.wire for e in p.log) for p in peers}
    assert len(logs) == 1
    rep = replay(e.wire for e in peers[0].log)
    assert rep.closed and rep.shuffles_verified == n * len(rep.opened)
    assert sorted(peers[0].table.seating) == list(range(n))
