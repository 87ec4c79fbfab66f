"""A hostile party and a restarted one, against bot peer processes over a real mesh.

Three seats are `bot-peer` processes on loopback (they join any proposal a present party
makes: the bot peers' policy); the fourth is this test's own client, a `Driver` over the same
mesh code. As a hostile party it signs a void naming a bot that the table is waiting for this
very moment (the bot's process is stopped for a moment, so the table surely waits for it): at
the table's point, or 30 entries past it. No bot may join before its own clock has seen that
bot keep the table waiting past the timeout; the bot comes back and the match plays on. As an
honest party it agrees to `end`, restarts, and types `void`: it stands by what it signed.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from buraco_p2p.bots import make_bot
from buraco_p2p.engine import Move
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.botpeer import derive
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.node import open_node
from buraco_p2p.session import Fault, Peer, make_entry

from .lost import saved_entries, table_log

SEED = 31
ME = 3  # the cluster's index of this test's seat


def _choose(peer: Peer, rng: random.Random) -> Move:
    view = peer.table.view
    assert view is not None
    return make_bot("heuristic").choose_move(view, rng)


@contextlib.contextmanager
def _bots(tmp_path: Path, timeout_ms: int) -> Iterator[Cluster]:
    with Cluster(4, tmp_path / "d", None, seed=SEED, humans=[ME],
                 peer_args=["--timeout-ms", str(timeout_ms)]) as c:  # fmt: skip
        c.start()
        yield c


@contextlib.asynccontextmanager
async def _me(tmp_path: Path, c: Cluster, **kw: Any) -> AsyncIterator[Driver]:
    """This test's client at the cluster's table (joined, or resumed if it has been there)."""
    me = Identity.from_seed(derive(SEED, "identity/me"), "me")
    root = tmp_path / "me"
    tables = list(root.glob("tables/*/secret"))
    where: dict[str, Any] = (
        {"resume": bytes.fromhex(tables[0].parent.name)}
        if tables
        else {"invite": Invite.from_text(c.invite or "")}
    )
    async with open_node(me, root, identity_seed=derive(SEED, "identity/me"), **where,
                         **kw) as driver:  # fmt: skip
        yield driver


def _bot_party(c: Cluster, driver: Driver, i: int) -> int:
    key = Identity.from_seed(derive(SEED, f"identity/{i}"), "bot").public
    return list(driver.peer.table.keys).index(key)


def _signal(c: Cluster, i: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(c.procs[i].proc.pid, sig)


async def _until(
    what: str, ready: Callable[[], bool], timeout: float = 120.0,
    state: Callable[[], str] = lambda: "",
) -> None:  # fmt: skip
    with trio.move_on_after(timeout):
        while not ready():
            await trio.sleep(0.05)
    assert ready(), f"{what}: not within {timeout:.0f} s {state()}"


def _state(d: Driver) -> str:
    p = d.peer
    return (f"(log {len(p.log)}, waiting for {p.table.waiting_for}, overdue {set(p.overdue)}, "
            f"agreed {p.agreement}, linked {d._linked()})")  # fmt: skip


def _void_wire(driver: Driver, silent: list[int], ahead: int, action: str = "end") -> bytes:
    t = driver.peer.table
    party = driver.peer.party
    active = [p for p in range(t.n) if p not in silent]
    return make_entry(
        driver.mesh.identity, table=t.terms.table_id,
        index=len(t.log) + ahead + active.index(party), prev=t.void_prev(), author=party,
        kind="void", body={"action": action, "silent": silent},
    ).wire  # fmt: skip


async def _taken_in(driver: Driver, bots: list[PeerKey]) -> None:
    """Ask each bot for the log from its first entry and wait for its genesis: every message
    we sent it before has been filed by it (one link delivers in order), and the work it
    allows is done before the bot reads its next message."""
    seen: set[bytes] = set()
    spied = driver._on_message

    def spy(key: PeerKey, msg: Any) -> None:
        if isinstance(msg, list) and msg[:1] == ["e"] and msg[1] == driver.peer.log[0].wire:
            seen.add(key.raw)
        spied(key, msg)

    driver._on_message = spy  # type: ignore[method-assign]
    try:
        for key in bots:
            await driver.mesh.send(key, ["sync", 0])
        await _until("every bot answered", lambda: {k.raw for k in bots} <= seen, 60)
    finally:
        driver._on_message = spied  # type: ignore[method-assign]


def _logs(c: Cluster) -> list[list[Any]]:
    out = []
    for i in range(3):
        path = table_log(c.root / f"peer-{i}")
        out.append(saved_entries(path) if path is not None else [])
    return out


@pytest.mark.parametrize("ahead", [0, 30])
async def test_a_hostile_void_names_nobody_present_and_freezes_nothing(
    tmp_path: Path, ahead: int
) -> None:
    with _bots(tmp_path, 60_000) as c:
        async with _me(tmp_path, c, choose=_choose) as me:
            await _until("a hand under way", lambda: len(me.peer.log) > 60)
            x = 1  # a bot (not the host): stopped, so that the table surely waits for it
            party = _bot_party(c, me, x)
            _signal(c, x, signal.SIGSTOP)
            try:
                t = me.peer.table
                await _until("the table waits for the stopped bot",
                             lambda: party in t.waiting_for and t.can_void((party,)))  # fmt: skip
                await trio.sleep(0)
                point = len(t.log)
                await me.mesh.broadcast(["e", _void_wire(me, [party], ahead)])
                others = [k for k in me.mesh.peers() if k != t.keys[party]]
                await _taken_in(me, others)
            finally:
                _signal(c, x, signal.SIGCONT)
            # the bot is back: its move is taken and the match goes on past both points
            await _until("every log 40 entries past the point",
                         lambda: all(len(log) > point + ahead + 40 or
                                     (log and log[-1].kind in ("final", "void"))
                                     for log in _logs(c)))  # fmt: skip
            for log in _logs(c):
                assert all(e.kind != "void" for e in log)
            assert all(e.kind != "void" for e in me.peer.log)


async def test_a_restarted_client_stands_by_the_void_it_signed(tmp_path: Path) -> None:
    """This client agrees to end the match naming a bot that is gone, while another bot is
    stopped (so the round cannot complete); it restarts and types `void`: it is told it
    already agreed to end and sends its saved void again; the stopped bot comes back and the
    match ends by that one agreement, with nobody accused of equivocation."""
    faults: list[Fault] = []

    def note(events: list[Any]) -> None:
        faults.extend(e for e in events if isinstance(e, Fault))

    with _bots(tmp_path, 3000) as c:
        async with _me(tmp_path, c, choose=_choose, on_events=note) as me:
            await _until("a hand under way", lambda: len(me.peer.log) > 60)
            gone = _bot_party(c, me, 2)
            c.kill(2)
            c.skip.add(2)
            await _until("the table waits for the bot that is gone",
                         lambda: gone in me.peer.table.waiting_for)  # fmt: skip
            await _until("the bot is overdue here", lambda: gone in me.overdue, 60)
            _signal(c, 1, signal.SIGSTOP)
            said = me.agree("end")
            assert said == "proposed: end", said
            point = len(me.peer.log)
        try:
            async with _me(tmp_path, c, choose=_choose, on_events=note) as me:
                assert len(me.peer.log) == point
                await _until("the bot is overdue again", lambda: gone in me.overdue, 60,
                             lambda: _state(me))  # fmt: skip
                said = me.agree("void")
                assert said.startswith("already agreed to end"), said
                _signal(c, 1, signal.SIGCONT)
                await _until("the match ended", lambda: me.peer.table.closed)
                voids = [e for e in me.peer.log if e.kind == "void"]
                assert {e.body["action"] for e in voids} == {"end"}
                assert voids[0].index == point and voids[0].body["silent"] == [gone]
        finally:
            _signal(c, 1, signal.SIGCONT)
        await _until(
            "the bots' logs end alike",
            lambda: all(log and log[-1].kind == "void" for log in _logs(c)[:2]),
        )
        for log in _logs(c)[:2]:
            assert [e.wire for e in log] == [e.wire for e in me.peer.log]
        assert not faults


async def test_a_party_that_never_signs_is_named_by_a_retry(tmp_path: Path) -> None:
    """Held hostage (4.5, "Retries"): a bot is killed on its turn; the two other bots (the
    host among them, `--void end`) sign a void naming it; this client is present but never
    signs. Twice the table's timeout later the bots sign try 1 naming the dead bot and this
    client, and every log, this client's too, closes on that one round."""
    with Cluster(4, tmp_path / "d", None, seed=SEED, humans=[ME],
                 peer_args=["--timeout-ms", "2000", "--void", "end"]) as c:  # fmt: skip
        c.start()
        async with _me(tmp_path, c, choose=_choose) as me:
            await _until("a hand under way", lambda: len(me.peer.log) > 60)
            gone = _bot_party(c, me, 2)
            holder = me.peer.party
            c.kill(2)
            c.skip.add(2)
            await _until("the match closed", lambda: me.peer.table.closed, 120,
                         lambda: _state(me))  # fmt: skip
            voids = [e for e in me.peer.log if e.kind == "void"]
            assert voids and {e.body.get("try") for e in voids} == {1}
            assert {tuple(e.body["silent"]) for e in voids} == {tuple(sorted((gone, holder)))}
        await _until("the bots' logs end alike",
                     lambda: all(log and log[-1].kind == "void" for log in _logs(c)[:2]))
        for log in _logs(c)[:2]:
            assert [e.wire for e in log] == [e.wire for e in me.peer.log]


async def test_a_party_that_tells_one_bot_it_is_catching_up_gets_no_bot_named(
    tmp_path: Path,
) -> None:
    """This client plays by hand until a turn that follows several entries of the others
    since its own latest; then it never moves, and tells one bot only, again and again, that
    it is catching up (an `at` claim that counts there, 4.5): that bot counts it present
    while the two others see it keep the table waiting and sign a void naming it. The bot
    that heard the claims joins all the same (a claim decides who proposes, never who may
    agree), so the round names this client alone; were it to hold back, the others' retry
    would name it, present and answering (S2), or, with party 0 among the two, hold the
    table for good."""
    with Cluster(4, tmp_path / "d", None, seed=SEED, humans=[ME],
                 peer_args=["--timeout-ms", "2000", "--void", "end"]) as c:  # fmt: skip
        c.start()
        async with _me(tmp_path, c) as me:  # no chooser: we play our turns by hand
            rng = random.Random(SEED)

            def gap() -> int:  # the entries after our latest one: what our claims can buy
                log = me.peer.log
                return len(log) - 1 - max(e.index for e in log if e.author == me.peer.party)

            with trio.move_on_after(180):
                while not (me.peer.on_turn and gap() >= 5):
                    if me.peer.on_turn:
                        me.play(_choose(me.peer, rng))
                    await trio.sleep(0.02)
            assert me.peer.on_turn and gap() >= 5, _state(me)
            told = Identity.from_seed(derive(SEED, "identity/1"), "bot").public
            named = _bot_party(c, me, 1)
            claim = len(me.peer.log) - 1 - gap()
            with trio.move_on_after(120):
                while not me.peer.table.closed:
                    if claim + 1 < len(me.peer.log):
                        claim += 1  # each entry past our latest counts once, for a timeout
                        await me.mesh.send(told, ["at", claim])
                    await trio.sleep(1.5)
            assert me.peer.table.closed, _state(me)
            voids = [e for e in me.peer.log if e.kind == "void"]
            assert voids and {tuple(e.body["silent"]) for e in voids} == {(me.peer.party,)}
            assert all(named not in e.body["silent"] for e in voids)
        await _until("the bots' logs end alike",
                     lambda: all(log and log[-1].kind == "void" for log in _logs(c)))
        for bot_log in _logs(c):
            assert [e.wire for e in bot_log] == [e.wire for e in me.peer.log]
