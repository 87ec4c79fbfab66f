"""The sans-IO reliable-delivery state machine: exactly once, in order, across reconnects."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.net.channel.reliable import (
    Ack,
    ChannelState,
    Data,
    Liveness,
    ReliableChannel,
    Resume,
    SendBufferFull,
    SequenceError,
    parse_record,
)

INC_A = b"A" * 16
INC_B = b"B" * 16


def pair() -> tuple[ReliableChannel, ReliableChannel]:
    a = ReliableChannel(INC_A, "bob")
    b = ReliableChannel(INC_B, "alice")
    connect(a, b)
    return a, b


def connect(a: ReliableChannel, b: ReliableChannel) -> tuple[list[Data], list[Data]]:
    ra, rb = a.make_resume(), b.make_resume()
    resend_a, _ = a.on_resume(rb)
    resend_b, _ = b.on_resume(ra)
    return resend_a, resend_b


def deliver(dst: ReliableChannel, records: list[Data]) -> list[object]:
    out = []
    for rec in records:
        fresh, payload = dst.on_data(parse_record(rec.to_wire(), "peer"))  # type: ignore[arg-type]
        if fresh:
            out.append(payload)
            dst.consumed(dst.peer_incarnation)
    return out


def test_in_order_exactly_once_over_a_link() -> None:
    a, b = pair()
    recs = [a.send(i) for i in range(50)]
    assert deliver(b, recs) == list(range(50))
    assert deliver(b, recs[10:20]) == []  # duplicates are dropped
    a.on_ack(b.make_ack().ack)
    assert a.unacked_count == 0


def test_reconnect_replays_only_what_was_missed() -> None:
    a, b = pair()
    sent = [a.send(i) for i in range(30)]
    got = deliver(b, sent[:12])  # link dies after 12 arrived
    a.link_lost()
    b.link_lost()
    resend_a, resend_b = connect(a, b)
    assert resend_b == []
    assert [r.seq for r in resend_a] == list(range(12, 30))
    got += deliver(b, resend_a)
    assert got == list(range(30))


def test_restart_from_snapshot_resumes_exactly() -> None:
    a, b = pair()
    got = deliver(b, [a.send(i) for i in range(10)])
    snap = ChannelState.from_wire(b.snapshot().to_wire())
    more = [a.send(i) for i in range(10, 20)]
    deliver(b, more[:3])  # arrived but the process died before persisting
    b2 = ReliableChannel(INC_B, "alice", state=snap)
    a.link_lost()
    resend_a, _ = connect(a, b2)
    got += deliver(b2, resend_a)
    assert got == list(range(20))


def test_resume_point_is_not_an_acknowledgement() -> None:
    """Received but not consumed, reconnect, crash, restore: each message once, pair works."""
    a, b = pair()
    sent = [a.send(i) for i in range(10)]
    for rec in sent:  # all arrive, none is handed to the application yet
        fresh, _ = b.on_data(parse_record(rec.to_wire(), "bob"))
        assert fresh
    saved = ChannelState.from_wire(b.snapshot().to_wire())
    a.link_lost()
    b.link_lost()
    resend_a, _ = connect(a, b)  # b's resume says recv_next == 10: nothing to resend
    assert resend_a == []
    assert a.unacked_count == 10  # ... and nothing acknowledged either
    # b crashes before its application consumed anything, and restores its snapshot.
    b2 = ReliableChannel(INC_B, "alice", state=saved)
    a.link_lost()
    resend_a, resend_b2 = connect(a, b2)
    assert resend_b2 == []
    got = deliver(b2, resend_a)
    assert got == list(range(10))
    a.on_ack(b2.make_ack().ack)
    assert a.unacked_count == 0
    # The pair keeps working, across another reconnect too.
    got += deliver(b2, [a.send(i) for i in range(10, 15)])
    a.link_lost()
    b2.link_lost()
    resend_a, _ = connect(a, b2)
    assert resend_a == [] and got == list(range(15))


def test_resume_from_before_what_was_acknowledged_is_an_error() -> None:
    a, b = pair()
    deliver(b, [a.send(i) for i in range(4)])
    a.on_ack(b.make_ack().ack)
    a.link_lost()
    with pytest.raises(SequenceError, match="asks again"):
        a.on_resume(Resume(INC_B, 0, INC_A, 2))
    with pytest.raises(SequenceError, match="only 4 were sent"):
        a.on_resume(Resume(INC_B, 0, INC_A, 5))


def test_fresh_restart_is_a_new_stream_not_duplicates() -> None:
    a, b = pair()
    deliver(b, [a.send(i) for i in range(5)])
    a.on_ack(b.make_ack().ack)
    a_new = ReliableChannel(b"N" * 16, "bob")  # a restarted with no saved state
    b.link_lost()
    ra, rb = a_new.make_resume(), b.make_resume()
    _, restarted = b.on_resume(ra)
    a_new.on_resume(rb)
    assert restarted is not None
    assert deliver(b, [a_new.send("x"), a_new.send("y")]) == ["x", "y"]


def test_peer_violations_are_sequence_errors() -> None:
    a, b = pair()
    with pytest.raises(SequenceError, match="acknowledged"):
        a.on_ack(5)
    a.send(0)
    skip = a.send(1)
    with pytest.raises(SequenceError, match="skipped"):
        b.on_data(skip)
    fresh = ReliableChannel(INC_A, "mallory")
    with pytest.raises(SequenceError, match="before resuming"):
        fresh.on_data(Data(0, 0, "x"))
    bads = [None, [], ["d", -1, 0, 1], ["d", 0, 0], ["r", b"x", 0, None, 0], ["z"], ["a", True]]
    for bad in bads:
        with pytest.raises(SequenceError):
            parse_record(bad, "mallory")


def test_resume_claiming_dropped_history_is_an_error() -> None:
    _a, b = pair()
    with pytest.raises(SequenceError, match="no longer holds"):
        b.on_resume(Resume(INC_A, 7, INC_B, 0))


def test_buffer_is_bounded() -> None:
    a = ReliableChannel(INC_A, "bob", max_buffer=3)
    for i in range(3):
        a.send(i)
    with pytest.raises(SendBufferFull, match="bob"):
        a.send(3)
    a.on_ack(2)
    a.send(3)


def test_snapshot_rejects_bad_buffers() -> None:
    with pytest.raises(SequenceError):
        ChannelState.from_wire([INC_A, 5, [[1, "x"]], None, 0])
    with pytest.raises(SequenceError):
        ChannelState.from_wire("nope")


@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.integers(0, 2**32))
def test_random_link_failures_never_lose_or_duplicate(cuts: list[int], seed: int) -> None:
    rng = random.Random(seed)
    a, b = pair()
    got: list[object] = []
    pending: list[Data] = []
    n = 0
    for burst in cuts:
        for _ in range(burst):
            pending.append(a.send(n))
            n += 1
        arrive = rng.randint(0, len(pending))
        got += deliver(b, pending[:arrive])
        if rng.random() < 0.5:
            a.on_ack(b.make_ack().ack)
        a.link_lost()
        b.link_lost()
        pending, _ = connect(a, b)
    got += deliver(b, pending)
    assert got == list(range(n))


def test_liveness() -> None:
    live = Liveness(100.0, interval=1.0, timeout=5.0)
    assert not live.heartbeat_due(100.5)
    assert live.heartbeat_due(101.0)
    live.on_send(101.0)
    assert live.next_wakeup() == 102.0
    assert not live.timed_out(104.9)
    live.on_receive(104.0)
    assert not live.timed_out(108.9)
    assert live.timed_out(109.0)
    with pytest.raises(ValueError):
        Liveness(0.0, interval=5.0, timeout=1.0)
    assert Ack(3).to_wire() == ["a", 3]


# -- live: real links on loopback ---------------------------------------------------------

from functools import partial  # noqa: E402

import trio  # noqa: E402
from mesh_helpers import FAST, assert_quiet, collect, table_of_four  # noqa: E402

from buraco_p2p import codec  # noqa: E402
from buraco_p2p.net.channel.identity import Identity  # noqa: E402
from buraco_p2p.net.mesh.mesh import Mesh, MeshState, PeerDown  # noqa: E402
from buraco_p2p.net.mesh.startup import host_table, join_table  # noqa: E402


async def wait_down(mesh: Mesh, peer: object) -> None:
    with trio.fail_after(5):
        while True:
            event = await mesh.next_event()
            if isinstance(event, PeerDown) and event.peer == peer:
                return


async def test_links_cut_mid_stream_lose_and_duplicate_nothing() -> None:
    async with table_of_four() as meshes:
        _host, b, c, _d = meshes
        total = 300

        async def sender() -> None:
            for i in range(total):
                await b.send(c.me, i)
                if i % 7 == 0:
                    await trio.sleep(0)

        async def cutter() -> None:
            for _ in range(4):
                await trio.sleep(0.01)
                run = c.records[b.me].run
                if run is not None:
                    await run.link.aclose()  # the TCP link dies under both ends

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender)
            nursery.start_soon(cutter)
        got = await collect(c, total)
        assert [msg for _, msg in got] == list(range(total))
        await assert_quiet(c)


async def test_peer_killed_and_restarted_rejoins_and_gets_what_it_missed_once() -> None:
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio", "duda")]
    reached_end = False
    async with (
        host_table(ids[0], config=FAST) as host,
        join_table(ids[1], host.invite, config=FAST) as b,
        join_table(ids[2], host.invite, config=FAST) as c,
        trio.open_nursery() as nursery,
    ):
        others = [host, b, c]

        async def run_d(task_status: trio.TaskStatus[Mesh]) -> None:
            async with join_table(ids[3], host.invite, config=FAST) as d:
                task_status.started(d)
                await trio.sleep_forever()

        d_scope = trio.CancelScope()

        async def run_d_killable(task_status: trio.TaskStatus[Mesh]) -> None:
            with d_scope:
                await run_d(task_status=task_status)

        d: Mesh = await nursery.start(run_d_killable)
        with trio.fail_after(10):
            for m in [*others, d]:
                await m.wait_all_up()
        for i, m in enumerate(others):
            for j in range(5):
                await m.broadcast(["early", i, j])
        for j in range(4):
            await d.broadcast(["from-d", j])
        early = await collect(d, 15)
        assert sorted(msg[1:] for _, msg in early) == sorted(
            [i, j] for i in range(3) for j in range(5)
        )
        for m in others:
            got_m = [msg for key, msg in await collect(m, 14) if key == d.me]
            assert got_m == [["from-d", j] for j in range(4)]
        # The application persists its delivery state with what it consumed, then dies.
        saved = MeshState.from_wire(codec.unpack(codec.pack(d.snapshot().to_wire())))
        d_key = d.me
        old_port = d.advertised[0].port
        d_scope.cancel()  # every socket of d goes away at once
        for m in others:
            await wait_down(m, d_key)
        # While d is away the others keep playing.
        for i, m in enumerate(others):
            for j in range(6):
                await m.broadcast(["missed", i, j])
        async with join_table(ids[3], host.invite, config=FAST, state=saved) as d2:
            assert d2.me == d_key
            assert d2.advertised[0].port != old_port
            with trio.fail_after(10):
                await d2.wait_all_up()
            got = await collect(d2, 18)
            await assert_quiet(d2)
            for i, m in enumerate(others):
                from_m = [msg for key, msg in got if key == m.me]
                assert from_m == [["missed", i, j] for j in range(6)]
            seated = host.roster.member(d_key) if host.roster else None
            assert seated is not None and seated.seat == 3
            assert seated.addresses == d2.advertised
            # d2 continues its own stream where the saved state left off: no duplicates.
            await d2.broadcast("back")
            for m in others:
                missed_among_others = await collect(m, 12)
                assert all(key != d_key for key, _ in missed_among_others)
                assert await collect(m, 1) == [(d_key, "back")]
                await assert_quiet(m)
            reached_end = True
        nursery.cancel_scope.cancel()
    assert reached_end


async def test_silent_link_is_reported_down_after_the_heartbeat_timeout() -> None:
    """A path that stops carrying anything (but never closes) is noticed by heartbeats."""
    import socket
    from dataclasses import replace
    from functools import partial

    from buraco_p2p.net.reach.invite import Endpoint

    config = replace(FAST, heartbeat_interval=0.1, heartbeat_timeout=0.6)
    frozen = trio.Event()
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    b_port = probe.getsockname()[1]
    probe.close()

    async def pump(src: trio.SocketStream, dst: trio.SocketStream) -> None:
        while not frozen.is_set():
            data = await src.receive_some(65536)
            if not data or frozen.is_set():
                break
            await dst.send_all(data)
        await trio.sleep_forever()  # hold both sockets open, carry nothing

    async def proxy(client: trio.SocketStream) -> None:
        upstream = await trio.open_tcp_stream("127.0.0.1", b_port)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pump, client, upstream)
            nursery.start_soon(pump, upstream, client)

    ids = [Identity.generate(n) for n in ("ana", "bia", "caio")]
    async with trio.open_nursery() as outer:
        listeners = await outer.start(partial(trio.serve_tcp, proxy, 0, host="127.0.0.1"))
        proxy_port = listeners[0].socket.getsockname()[1]
        via_proxy = (Endpoint.parse("127.0.0.1", proxy_port),)
        async with (
            host_table(ids[0], config=config) as host,
            join_table(ids[1], host.invite, config=config, port=b_port, advertise=via_proxy) as b,
            join_table(ids[2], host.invite, config=config) as c,
        ):
            with trio.fail_after(10):
                for m in (host, b, c):
                    await m.wait_all_up(3)
            assert not c.is_relayed(b.me)
            await c.send(b.me, "through the proxy")
            assert await collect(b, 1) == [(c.me, "through the proxy")]
            frozen.set()
            started = trio.current_time()
            with trio.fail_after(5):
                while True:
                    event = await c.next_event()
                    if isinstance(event, PeerDown) and event.peer == b.me:
                        break
            assert "silent" in event.reason
            assert trio.current_time() - started >= 0.4
            assert host.is_up(b.me) and host.is_up(c.me)
            outer.cancel_scope.cancel()


async def test_restart_without_saved_state_is_reported_and_starts_a_new_stream() -> None:
    from buraco_p2p.net.mesh.mesh import StreamReset

    ids = [Identity.generate(n) for n in ("ana", "bia")]
    async with host_table(ids[0], config=FAST) as host, trio.open_nursery() as nursery:
        scope = trio.CancelScope()

        async def run_b(task_status: trio.TaskStatus[Mesh]) -> None:
            with scope:
                async with join_table(ids[1], host.invite, config=FAST) as b:
                    task_status.started(b)
                    await trio.sleep_forever()

        b: Mesh = await nursery.start(run_b)
        with trio.fail_after(10):
            await b.wait_all_up(2)
        for j in range(3):
            await b.send(host.me, ["old", j])
        assert [m for _, m in await collect(host, 3)] == [["old", j] for j in range(3)]
        scope.cancel()
        await wait_down(host, b.me)
        async with join_table(ids[1], host.invite, config=FAST) as b2:
            with trio.fail_after(10):
                await b2.wait_all_up(2)
                while True:
                    event = await host.next_event()
                    if isinstance(event, StreamReset):
                        assert event.peer == b2.me
                        break
            # Fresh sequence numbers from b2 are new messages, not duplicates of the old ones.
            for j in range(3):
                await b2.send(host.me, ["new", j])
            assert [m for _, m in await collect(host, 3)] == [["new", j] for j in range(3)]
            await assert_quiet(host)
        nursery.cancel_scope.cancel()


@pytest.mark.slow
async def test_soak_random_link_cuts_while_everyone_broadcasts() -> None:
    rng = random.Random(2026)
    per_sender = 3000
    cuts = 0
    async with table_of_four() as meshes:
        keys = [m.me for m in meshes]
        done = trio.Event()

        async def talk(i: int) -> None:
            for j in range(per_sender):
                await meshes[i].broadcast([i, j])
                if j % 5 == 0:
                    await trio.sleep(0.005)

        async def cut() -> None:
            nonlocal cuts
            while not done.is_set():
                await trio.sleep(rng.uniform(0.02, 0.1))
                m = rng.choice(meshes)
                p = m.records.get(rng.choice([k for k in keys if k != m.me]))
                if p is not None and p.run is not None:
                    cuts += 1
                    await p.run.link.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cut)
            async with trio.open_nursery() as talkers:
                for i in range(4):
                    talkers.start_soon(talk, i)
            results = []
            for m in meshes:
                results.append(await collect(m, 3 * per_sender, timeout=60))
            done.set()
        assert cuts >= 20
        for r, got in enumerate(results):
            for s in set(range(4)) - {r}:
                assert [msg[1] for key, msg in got if key == keys[s]] == list(range(per_sender))


async def test_host_killed_and_restarted_on_its_port_gets_the_table_back() -> None:
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio", "duda")]
    table_id, room_secret = b"T" * 16, b"S" * 16
    host_scope = trio.CancelScope()
    reached_end = False

    async def run_host(task_status: trio.TaskStatus[Mesh], **restore: object) -> None:
        with host_scope:
            async with host_table(
                ids[0], port=port, config=FAST, table_id=table_id, room_secret=room_secret,
                **restore,  # type: ignore[arg-type]
            ) as host:
                task_status.started(host)
                await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        host: Mesh = await nursery.start(run_host)
        invite = host.invite
        async with (
            join_table(ids[1], invite, config=FAST) as b,
            join_table(ids[2], invite, config=FAST) as c,
            join_table(ids[3], invite, config=FAST) as d,
        ):
            with trio.fail_after(10):
                for m in (host, b, c, d):
                    await m.wait_all_up()
            saved_roster, saved_state = host.roster, host.snapshot()
            host_scope.cancel()
            for m in (b, c, d):
                await wait_down(m, ids[0].public)
            # The joiners keep playing among themselves, and write to the absent host.
            await b.send(c.me, "still here")
            assert await collect(c, 1) == [(b.me, "still here")]
            for j, m in enumerate((b, c, d)):
                await m.send(ids[0].public, ["while away", j])
            host_scope = trio.CancelScope()
            host2: Mesh = await nursery.start(
                partial(run_host, roster=saved_roster, state=saved_state)
            )
            with trio.fail_after(10):
                for m in (host2, b, c, d):
                    await m.wait_all_up()
            got = await collect(host2, 3)
            assert sorted(msg[1] for _, msg in got) == [0, 1, 2]
            await assert_quiet(host2)
            assert host2.roster is not None
            assert host2.roster.seat_keys() == tuple(i.public for i in ids)
            reached_end = True
        nursery.cancel_scope.cancel()
    assert reached_end


async def test_messages_received_but_not_consumed_survive_a_reconnect_and_a_crash() -> None:
    ids = [Identity.generate(n) for n in ("ana", "bia", "caio")]
    reached_end = False
    async with (
        host_table(ids[0], config=FAST) as host,
        join_table(ids[1], host.invite, config=FAST) as b,
        trio.open_nursery() as nursery,
    ):
        c_scope = trio.CancelScope()

        async def run_c(task_status: trio.TaskStatus[Mesh], **kw: object) -> None:
            with c_scope:
                async with join_table(
                    ids[2], host.invite, config=FAST, **kw  # type: ignore[arg-type]
                ) as c:
                    task_status.started(c)
                    await trio.sleep_forever()

        c: Mesh = await nursery.start(run_c)
        with trio.fail_after(10):
            for m in (host, b, c):
                await m.wait_all_up(3)
        for j in range(10):
            await b.send(c.me, ["kept", j])
        with trio.fail_after(10):
            while c.records[b.me].channel.recv_next < 10:  # arrived, none consumed
                await trio.sleep(0.01)
        saved = MeshState.from_wire(codec.unpack(codec.pack(c.snapshot().to_wire())))
        run = c.records[b.me].run
        assert run is not None
        await run.link.aclose()  # a reset forces the pair to resume
        with trio.fail_after(10):
            while not (c.is_up(b.me) and b.is_up(c.me) and c.records[b.me].run is not run):
                await trio.sleep(0.01)
        c_scope.cancel()  # c dies before its application consumed anything
        await wait_down(b, ids[2].public)
        c_scope = trio.CancelScope()
        c2: Mesh = await nursery.start(partial(run_c, state=saved))
        with trio.fail_after(10):
            await c2.wait_all_up(3)
        got = await collect(c2, 10)
        assert got == [(b.me, ["kept", j]) for j in range(10)]
        await b.send(c2.me, "after")
        assert await collect(c2, 1) == [(b.me, "after")]
        await assert_quiet(c2)
        assert not any("SequenceError" in r or "resume" in r for r in b.rejections)
        reached_end = True
        nursery.cancel_scope.cancel()
    assert reached_end


async def test_a_consumed_message_is_acknowledged_without_waiting_for_a_heartbeat() -> None:
    """What the application has shown is acknowledged at once: a peer that restarts without
    its state then has nothing already shown to replay (no chat line twice)."""
    from dataclasses import replace

    config = replace(FAST, heartbeat_interval=30.0, heartbeat_timeout=60.0)
    ids = [Identity.generate(n) for n in ("ana", "bia")]
    async with (
        host_table(ids[0], config=config) as host,
        join_table(ids[1], host.invite, config=config) as b,
    ):
        with trio.fail_after(10):
            await b.wait_all_up(2)
        await b.send(host.me, ["chat", "hello"])
        assert await collect(host, 1) == [(b.me, ["chat", "hello"])]
        with trio.fail_after(5):
            while b.records[host.me].channel.unacked_count:
                await trio.sleep(0.01)
