"""The sans-IO reliable-delivery state machine: exactly once, in order, across reconnects."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_p2p.net.reliable import (
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
