"""A match of a fixed length in minutes: the round of clocks after each hand, the time-up
verdict every replica reaches at the same place in the log, and the logs `verify` refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_helpers import bot_chooser, identities, run_until

from buraco_p2p.audit import render_text, verify_path
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.logfile import encode_log
from buraco_p2p.rules import get_preset
from buraco_p2p.session import (
    BadSignature,
    Entry,
    LogError,
    OutOfTurn,
    Peer,
    Phase,
    Router,
    TimedOut,
    TimeUp,
    decode_entry,
    make_entry,
    make_genesis,
    replay,
)
from buraco_p2p.session.flow import time_is_up

TABLE = b"time-limit-table"


def _router(minutes: int, n: int = 2, minute: tuple[float, ...] = ()) -> Router:
    rules = get_preset("classic").with_overrides({"players": n, "minutes": minutes})
    ids = identities(n)
    g = make_genesis(TABLE, ids, rules)
    minute = minute or (60.0,) * n
    peers = [
        Peer(g, ids[k], DeterministicRandomSource(bytes([7, k]) * 16), minute=minute[k])
        for k in range(n)
    ]
    r = Router(peers, bot_chooser(7))
    r.start()
    return r


def _in_hand(r: Router, number: int) -> None:
    """Deliver until hand `number` is being played (a few moves into it)."""
    t = r.peers[0].table

    def playing() -> bool:
        view = t.view
        return (
            t.hand is not None and t.hand.number == number and view is not None
            and len(view.moves) >= 3
        )  # fmt: skip

    run_until(r, playing)
    assert playing()


def _time_entries(log: list[Entry]) -> list[Entry]:
    return [e for e in log if e.kind == "time"]


def test_the_verdict_is_more_than_half_of_the_clocks() -> None:
    assert time_is_up(1, [60_000, 60_000])
    assert not time_is_up(1, [60_000, 59_999])  # two players: both clocks
    assert time_is_up(2, [0, 120_000, 120_001])
    assert not time_is_up(2, [0, 0, 120_000])
    assert not time_is_up(1, [0, 0, 60_000, 60_000])  # four: three of four
    assert time_is_up(1, [0, 60_000, 60_000, 60_000])


def test_time_up_in_the_middle_of_a_hand_ends_the_match_after_that_hand() -> None:
    r = _router(minutes=1)
    _in_hand(r, 1)  # hand 0 played and its round of clocks said "go on"
    r.advance(61.0)  # the time is up in the middle of hand 1
    r.run()
    peers = r.peers
    assert all(p.table.closed for p in peers)
    logs = {tuple(e.wire for e in p.log) for p in peers}
    assert len(logs) == 1
    t = peers[0].table
    assert t.match is not None and t.match.time_is_up
    assert t.hands_played == 2 and t.match.winner is not None
    rounds = _time_entries(peers[0].log)
    assert len(rounds) == 2 * 2  # one round of two clocks after each hand
    assert all(e.body["ms"] < 60_000 for e in rounds[:2])
    assert all(e.body["ms"] >= 60_000 for e in rounds[2:])
    # the round of clocks is the last step before the final scores, in every peer's log
    kinds = [e.kind for e in peers[0].log]
    assert kinds[-4:] == ["time", "time", "final", "final"]
    for p in range(2):
        ups = [e for e in r.events[p] if isinstance(e, TimeUp)]
        assert [(u.hand, len(u.clocks)) for u in ups] == [(1, 2)]
    rep = replay(e.wire for e in peers[0].log)
    assert rep.closed and rep.hands == 2 and rep.winner == t.match.winner


def test_one_fast_clock_of_two_does_not_end_the_match() -> None:
    r = _router(minutes=1, minute=(1e-6, 60.0))  # party 0's clock runs a million times fast
    _in_hand(r, 1)
    rounds = _time_entries(r.peers[1].log)
    assert len(rounds) == 2 and rounds[0].body["ms"] >= 60_000 > rounds[1].body["ms"]
    assert r.peers[1].table.match is not None and not r.peers[1].table.match.time_is_up
    r.advance(61.0)
    r.run()
    assert all(p.table.closed for p in r.peers) and r.peers[0].table.hands_played == 2


@pytest.fixture(scope="module")
def timed_log() -> list[Entry]:
    r = _router(minutes=1)
    _in_hand(r, 0)
    r.advance(61.0)
    r.run()
    assert r.peers[0].table.closed
    return list(r.peers[0].log)


def test_a_timed_log_replays(timed_log: list[Entry]) -> None:
    rep = replay(e.wire for e in timed_log)
    assert rep.closed and rep.table.match is not None and rep.table.match.time_is_up


def test_a_partial_round_of_clocks_is_refused(timed_log: list[Entry]) -> None:
    """The final scores after a round only one party signed: the other's clock is missing."""
    first = next(i for i, e in enumerate(timed_log) if e.kind == "time")
    final = timed_log[first + 2]
    assert final.kind == "final"
    ids = identities(2)
    early = make_entry(
        ids[final.author], table=TABLE, index=first + 1,
        prev=final.prev,
        author=final.author, kind="final", body=dict(final.body),
    )  # fmt: skip
    with pytest.raises(OutOfTurn) as err:
        replay([*timed_log[: first + 1], early])
    assert err.value.index == first + 1 and err.value.author == final.author
    with pytest.raises(LogError, match="ends before the match result"):
        replay(timed_log[: first + 1], require_closed=True)


def test_a_clock_signed_by_another_party_is_refused(timed_log: list[Entry]) -> None:
    first = next(i for i, e in enumerate(timed_log) if e.kind == "time")
    theirs = timed_log[first + 1]
    ids = identities(2)
    forged = make_entry(
        ids[0], table=TABLE, index=theirs.index, prev=theirs.prev, author=theirs.author,
        kind="time", body={"ms": 3_600_000},
    )  # fmt: skip
    with pytest.raises(BadSignature) as err:
        replay([*timed_log[: first + 1], forged])
    assert err.value.index == theirs.index and err.value.author == theirs.author


def test_a_time_entry_in_a_match_without_a_time_limit_is_refused() -> None:
    r = _router(minutes=0)
    t = r.peers[0].table
    run_until(r, lambda: t.hands_played == 1 and t.phase is Phase.HAND_KEYS)
    assert t.phase is Phase.HAND_KEYS
    log = list(t.log)
    cut = t.step_start  # the first entry of hand 1: the time round would go here
    ids = identities(2)
    forged = make_entry(
        ids[0], table=TABLE, index=cut, prev=t.step_prev, author=0, kind="time",
        body={"ms": 60_000},
    )  # fmt: skip
    with pytest.raises(OutOfTurn, match="minutes=0") as err:
        replay([*log[:cut], forged])
    assert err.value.index == cut and err.value.author == 0


@pytest.mark.parametrize("body", [{"ms": -1}, {"ms": 2**31}, {"ms": "1"}, {"ms": 1, "x": 2}, {}])
def test_a_malformed_clock_is_refused(timed_log: list[Entry], body: dict[str, object]) -> None:
    first = next(i for i, e in enumerate(timed_log) if e.kind == "time")
    mine = timed_log[first]
    ids = identities(2)
    bad = make_entry(
        ids[mine.author], table=TABLE, index=mine.index, prev=mine.prev, author=mine.author,
        kind="time", body=body,
    )  # fmt: skip
    with pytest.raises(LogError) as err:
        replay([*timed_log[:first], bad])
    assert type(err.value).__name__ == "MalformedEntry" and err.value.index == first


def test_verify_summarises_a_timed_match(timed_log: list[Entry], tmp_path: Path) -> None:
    path = tmp_path / "timed.log"
    path.write_bytes(encode_log(e.wire for e in timed_log))
    verdict = verify_path(str(path))
    assert verdict.code == 0
    doc = verdict.doc
    assert (doc["minutes"], doc["clock_rounds"], doc["time_up"]) == (1, 1, True)
    assert "time limit 1 min: 1 rounds of clocks, the time is up" in render_text(doc)


def test_a_clock_reading_is_saved_before_it_is_sent() -> None:
    """A reading cannot be made twice the same: each party's `time` entry is in its own log
    (persisted) before any other party can receive it, so a restart never re-signs it."""
    r = _router(minutes=1, n=3)
    _in_hand(r, 0)
    r.advance(61.0)
    sent: set[bytes] = set()
    for _ in range(200_000):
        if not r.queue:
            break
        for sender, _to, data in r.queue:
            entry = decode_entry(data)
            if entry.kind == "time" and entry.hash not in sent:
                saved = {e.hash for e in r.persisted[sender]}
                assert entry.hash in saved, f"party {sender} sent a reading it had not saved"
                sent.add(entry.hash)
        r.run(1)
    assert all(p.table.closed for p in r.peers) and len(sent) == 3


def test_a_silent_party_in_a_round_of_clocks_is_the_only_one_blamed() -> None:
    """Readings are made in turn, so the parties after a silent one wait too: only the
    silent one is named, and the others can agree to end the match without it."""
    r = _router(minutes=1, n=3)
    t0 = r.peers[0].table
    run_until(r, lambda: t0.phase is Phase.TIME)
    assert t0.phase is Phase.TIME
    r.silent = {1}
    r.run()
    r.advance(200.0)  # past the table's timeout
    for p in (0, 2):
        timed_out = [e for e in r.events[p] if isinstance(e, TimedOut)]
        assert [e.parties for e in timed_out] == [(1,)]
    for p in (0, 2):
        r.act(p, r.peers[p].propose_void("end", r.now))
    r.run()
    assert r.peers[0].table.closed and r.peers[2].table.closed
    assert [e.wire for e in r.peers[0].log] == [e.wire for e in r.peers[2].log]


def test_verify_refuses_a_round_of_clocks_one_party_did_not_sign(
    timed_log: list[Entry], tmp_path: Path
) -> None:
    """`buraco-p2p verify` on a log whose final scores follow a round of clocks signed by
    party 0 alone: exit 1, naming the entry that took party 1's place and its author."""
    first = next(i for i, e in enumerate(timed_log) if e.kind == "time")
    final = timed_log[first + 2]
    ids = identities(2)
    early = make_entry(
        ids[final.author], table=TABLE, index=first + 1, prev=final.prev,
        author=final.author, kind="final", body=dict(final.body),
    )  # fmt: skip
    path = tmp_path / "partial.log"
    path.write_bytes(encode_log([e.wire for e in timed_log[: first + 1]] + [early.wire]))
    verdict = verify_path(str(path))
    assert verdict.code == 1
    doc = verdict.doc
    assert (doc["index"], doc["author"], doc["error"], doc["kind"]) == (
        first + 1, final.author, "OutOfTurn", "final",
    )  # fmt: skip
