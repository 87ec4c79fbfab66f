"""Match logs for the audit tests: played by four in-memory session peers, all crypto on, from
fixed identities and seeds (so every run audits the same bytes)."""

from __future__ import annotations

import dataclasses
import random
from functools import cache

from buraco_p2p.bots import make_bot
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import HandState, Move
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.identity import Identity
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Entry, Peer, Router, make_genesis

TABLE_ID = b"audit-test-table"


def identities(n: int = 4) -> list[Identity]:
    return [Identity.from_seed(bytes([0xA0 + i]) * 32, f"auditor{i}") for i in range(n)]


def play(preset: str = "classic", *, seed: int = 7, target: int | None = 300) -> list[Entry]:
    """A whole match (short: one hand reaches the target) and its log, as party 0 holds it."""
    rules = get_preset(preset)
    if target is not None:
        rules = dataclasses.replace(rules, target_score=target)
    ids = identities()
    genesis = make_genesis(TABLE_ID, ids, rules)
    peers = [
        Peer(genesis, ident, DeterministicRandomSource(bytes([seed, n]) * 16))
        for n, ident in enumerate(ids)
    ]
    bot = make_bot("heuristic")
    rng = random.Random(seed)

    def choose(party: int, view: HandState) -> Move:
        return bot.choose_move(view, rng)

    router = Router(peers, choose)
    router.start()
    router.run()
    logs = [[e.wire for e in p.log] for p in peers]
    assert all(log == logs[0] for log in logs), "the peers' logs differ"
    assert peers[0].table.closed, "the match did not finish"
    return list(peers[0].log)


@cache
def match_log(preset: str = "classic", seed: int = 7) -> bytes:
    """The log file of a short match (cached: played once per test run)."""
    return encode_log(e.wire for e in play(preset, seed=seed))
