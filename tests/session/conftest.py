"""One complete match of at least two hands, played once for the session tests that only read
its log or its peers' final state (playing a match is most of these tests' cost)."""

from __future__ import annotations

import dataclasses

import pytest
from session_helpers import bot_chooser, identities

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Router, make_genesis


@pytest.fixture(scope="session")
def played_match() -> Router:
    rules = dataclasses.replace(get_preset("classic"), target_score=1500)
    g = make_genesis(b"replay-test-tabl", identities(), rules)
    peers = [Peer(g, i, DeterministicRandomSource(bytes([9, n]) * 16)) for n, i in
             enumerate(identities())]  # fmt: skip
    r = Router(peers, bot_chooser(9))
    r.start()
    r.run()
    assert all(p.table.closed for p in peers) and peers[0].table.hands_played >= 2
    return r
