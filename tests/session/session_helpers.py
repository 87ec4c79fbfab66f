"""Tables of in-memory session peers for the session tests: fixed identities and seeds."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import random
from collections.abc import Callable

from buraco_p2p.bots import make_bot
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import HandState, Move
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Entry, Fault, Peer, Router, Table, make_entry, make_genesis
from buraco_p2p.session.router import Chooser

TABLE_ID = b"session-test-tbl"


def identities(n: int = 4) -> list[Identity]:
    return [Identity.from_seed(bytes([i + 1]) * 32, f"player{i}") for i in range(n)]


def genesis(
    preset: str = "us", n: int = 4, timeout_ms: int = 60_000, table: bytes = TABLE_ID
) -> Entry:
    return make_genesis(table, identities(n), get_preset(preset), timeout_ms=timeout_ms)


def bot_chooser(seed: int = 1, name: str = "heuristic") -> Chooser:
    bot = make_bot(name)
    rng = random.Random(seed)

    def choose(party: int, view: HandState) -> Move:
        return bot.choose_move(view, rng)

    return choose


def table(
    preset: str = "us",
    *,
    seed: int = 1,
    choose: Chooser | None = None,
    timeout_ms: int = 60_000,
    **router_args: object,
) -> Router:
    """Four peers of a fresh table (not started)."""
    g = genesis(preset, timeout_ms=timeout_ms)
    ids = identities()
    peers = [Peer(g, ids[i], DeterministicRandomSource(bytes([seed, i]) * 16)) for i in range(4)]
    return Router(peers, choose or bot_chooser(seed), **router_args)  # type: ignore[arg-type]


def play_turn(router: Router, party: int) -> None:
    """`party`, on turn in a table whose turns the test answers (`Router.manual`), plays the
    move its chooser picks."""
    view = router.peers[party].table.view
    assert view is not None
    router.act(party, router.peers[party].play(router.choose(party, view), router.now))


def faults(router: Router, party: int) -> list[Fault]:
    return [e for e in router.events[party] if isinstance(e, Fault)]


def same_logs(router: Router, parties: list[int]) -> bool:
    logs = [[e.wire for e in router.peers[p].log] for p in parties]
    return all(log == logs[0] for log in logs)


def one_log(router: Router, parties: list[int]) -> bool:
    """Whether the parties' logs are one log: of any two, one is a prefix of the other."""
    logs = sorted(([e.wire for e in router.peers[p].log] for p in parties), key=len)
    return all(b[: len(a)] == a for a, b in itertools.pairwise(logs))


def run_until(router: Router, done: Callable[[], bool], bound: int = 100_000) -> None:
    """Deliver one entry at a time until `done()` holds (or the queue empties)."""
    for _ in range(bound):
        if done() or not router.queue:
            return
        router.run(1)


def snapshot(router: Router) -> Router:
    """An independent copy of a table in its current state (identity keys shared)."""
    memo: dict[int, object] = {}
    for p in router.peers:
        memo[id(p.identity)] = p.identity
        memo.update(_shared(p.table))
    return copy.deepcopy(router, memo)


def _shared(table_: Table) -> dict[int, object]:
    """What copies may share: identity keys, and the engine's meld oracle (a cache)."""
    memo: dict[int, object] = {id(k): k for k in table_.terms.keys}
    view = table_.view
    if view is not None:
        memo[id(view.oracle)] = view.oracle
    return memo


def table_copy(table_: Table) -> Table:
    return copy.deepcopy(table_, _shared(table_))


def resign(entry: Entry, party: int, **changes: object) -> Entry:
    """The entry with some fields changed ("body" replaces the body), signed by `party`."""
    fields: dict[str, object] = dict(
        table=entry.table, index=entry.index, prev=entry.prev, author=entry.author,
        kind=entry.kind, body=dict(entry.body),
    )  # fmt: skip
    fields.update(changes)
    return make_entry(identities()[party], **fields)  # type: ignore[arg-type]


def forge(router: Router, party: int, kind: str, body: dict[str, object]) -> Entry:
    """An entry by `party` for the next index of its own log, correctly chained and signed."""
    t = router.peers[party].table
    return make_entry(
        identities()[party], table=t.terms.table_id, index=len(t.log), prev=t.step_prev,
        author=party, kind=kind, body=body,
    )  # fmt: skip


def stalled(seed: int, table_id: bytes, gone: int, limit: float) -> tuple[Router, Identity]:
    """A short match of the "us" rules with party `gone` silent once the first hand is under
    way and the others `2 * limit` seconds past the table's timeout (`limit` seconds);
    returns the router and an heir identity for the seat."""
    rules = dataclasses.replace(get_preset("us"), target_score=300)
    g = make_genesis(table_id, identities(), rules, timeout_ms=int(limit * 1000))
    peers = [Peer(g, i, DeterministicRandomSource(bytes([seed, n]) * 16))
             for n, i in enumerate(identities())]  # fmt: skip
    r = Router(peers, bot_chooser(seed), relay=True)
    r.start()
    run_until(r, lambda: len(r.peers[0].log) > 40)
    r.silent = {gone}
    r.run()
    r.advance(2 * limit)
    return r, Identity.from_seed(b"\x77" * 32, "heir")
