"""`verify --jobs N`: the proofs checked by N processes, and the first bad entry exactly the one
`--jobs 1` names (position, author, error, reason), wherever in the match the bad entries are."""

from __future__ import annotations

import hashlib
import itertools
import pickle
import resource
import signal
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from flips import flipped, record_bounds

from buraco_p2p import verify_jobs as verify_jobs_module
from buraco_p2p.audit import EXIT_NOT_A_LOG, verify_bytes
from buraco_p2p.bots import make_bot
from buraco_p2p.bots.selfplay import resolve_rules, session_match
from buraco_p2p.cli import main
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session import Entry, decode_entry, make_entry
from buraco_p2p.verify_jobs import (
    BadEntry,
    _check_batch,
    _Deferred,
    _replay,
    _Settled,
    _start_pool,
    parse_jobs,
    replay_log,
)

SEED = 5
PARTIES = 2


@cache
def three_hands() -> tuple[bytes, ...]:
    """The first three hands of a two-seat selfplay match (`selfplay --log --hands 3`)."""
    rules = resolve_rules("classic", [], players=PARTIES)
    log = session_match(rules, [make_bot("heuristic")] * PARTIES, SEED, 3)
    return tuple(e.wire for e in log)


def identity(party: int) -> Identity:
    # selfplay's keys for seed SEED (every test below checks that its change is what is named,
    # so a different derivation could not pass unnoticed)
    seed = hashlib.sha256(f"buraco-p2p/selfplay-log/{SEED}/identity/{party}".encode()).digest()
    return Identity.from_seed(seed, f"bot{party}")


def resign(entry: Entry, body: dict[str, Any]) -> bytes:
    """The entry with another body, signed again by its own author."""
    return make_entry(
        identity(entry.author), table=entry.table, index=entry.index, prev=entry.prev,
        author=entry.author, kind=entry.kind, body=body,
    ).wire  # fmt: skip


def in_hand(kind: str, hand: int, pred: Callable[[Entry], bool] = lambda e: True) -> Entry:
    """The first entry of `kind` in hand `hand` (counted from 0) that `pred` accepts."""
    entries = [decode_entry(w) for w in three_hands()]
    starts = [e.index for e in entries if e.kind == "keys"][::PARTIES]
    end = starts[hand + 1] if hand + 1 < len(starts) else len(entries)
    return next(e for e in entries[starts[hand] : end] if e.kind == kind and pred(e))


def flip(data: bytes, pos: int) -> bytes:
    return data[:pos] + bytes([data[pos] ^ 0x01]) + data[pos + 1 :]


# Each change makes its entry bad, signed by its author; a deck proof, a move, a score...


def bad_shuffle(hand: int) -> tuple[int, bytes]:
    e = in_hand("shuffle", hand)
    deck = bytearray(e.body["deck"])
    deck[64:128], deck[128:192] = deck[128:192], deck[64:128]  # two ciphertexts swapped
    return e.index, resign(e, {**e.body, "deck": bytes(deck)})


def bad_shares(hand: int) -> tuple[int, bytes]:
    e = in_hand("shares", hand)
    shares = dict(e.body["shares"])
    batch = next(k for k, v in shares.items() if isinstance(v, bytes))
    shares[batch] = flip(shares[batch], 5)  # a share changed: the batch proof fails
    return e.index, resign(e, {**e.body, "shares": shares})


def bad_key_proof(hand: int) -> tuple[int, bytes]:
    e = in_hand("keys", hand)
    return e.index, resign(e, {**e.body, "key": flip(e.body["key"], 40)})


def bad_move(hand: int) -> tuple[int, bytes]:
    e = in_hand("move", hand, lambda e: e.body["m"][0] == 5)  # a discard
    m = list(e.body["m"])
    m[2] = (m[2] + 1) % 104  # a slot the mover's shares do not open
    return e.index, resign(e, {**e.body, "m": m})


def bad_score(hand: int) -> tuple[int, bytes]:
    e = in_hand("result", hand)
    return e.index, resign(e, {**e.body, "state": bytes(32)})


def bad_signature(hand: int) -> tuple[int, bytes]:
    e = in_hand("shares", hand)
    return e.index, flip(e.wire, len(e.wire) - 3)


def answer(wires: list[bytes], jobs: int) -> tuple[object, ...]:
    try:
        r = replay_log(wires, jobs, pool_from=0)
    except BadEntry as bad:
        err = bad.error
        return ("bad", bad.position, err.index, err.author, type(err).__name__, err.reason)
    return ("fair", r.entries, r.hands, r.shuffles_verified, r.scores, r.opened)


CHANGES = {
    "a shuffle proof in the last hand": [(bad_shuffle, 2)],
    "a share proof, then a shuffle in a later hand": [(bad_shares, 1), (bad_shuffle, 2)],
    "a shuffle, then a share proof two hands later": [(bad_shuffle, 0), (bad_shares, 2)],
    "a move, then a shuffle proof in a later hand": [(bad_move, 0), (bad_shuffle, 2)],
    "a key proof, then a score": [(bad_key_proof, 1), (bad_score, 2)],
    "a score, then a key proof": [(bad_score, 0), (bad_key_proof, 1)],
    "a signature, then shares of every hand": [
        (bad_signature, 1), (bad_shares, 0), (bad_shares, 2)
    ],
    "a share proof in every hand": [(bad_shares, 0), (bad_shares, 1), (bad_shares, 2)],
}  # fmt: skip


@pytest.mark.parametrize("name", CHANGES)
def test_the_first_bad_entry_is_the_same_on_any_number_of_processes(name: str) -> None:
    wires = list(three_hands())
    changed = [change(hand) for change, hand in CHANGES[name]]
    for index, wire in changed:
        wires[index] = wire
    first = min(index for index, _ in changed)
    one = answer(wires, 1)
    assert one[:2] == ("bad", first), one  # the change made is what is named
    assert answer(wires, 2) == one
    assert answer(wires, 3) == one


@pytest.mark.parametrize("where", [(0.5, 0.05), (0.9, 0.3), (0.7, 0.99)])
def test_changed_bytes_in_two_hands_are_named_alike(where: tuple[float, float]) -> None:
    """One byte changed in each of two records (of different hands): `verify` on one process
    and on two name the same first bad entry."""
    data = encode_log(three_hands())
    bounds = record_bounds(data)
    for share in where:
        start, end = bounds[int(share * (len(bounds) - 1))]
        data = flipped(data, (start + end) // 2, 0x10)
    one = verify_bytes(data, jobs=1)
    assert one.code == 1
    assert verify_bytes(data, jobs=2) == one


def test_a_fair_log_replays_alike_and_its_proofs_are_checked_by_the_workers() -> None:
    wires = list(three_hands())
    one = answer(wires, 1)
    assert one[0] == "fair" and one[2] == 3
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    assert answer(wires, 2) == one
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime > before


def test_the_verdict_document_is_the_same(tmp_path: Path) -> None:
    """Through the command's own path (`audit.verify_bytes`, the pool used from the log's
    size on), for a log with a bad entry in its second hand."""
    wires = list(three_hands())
    index, wire = bad_shares(1)
    wires[index] = wire
    data = encode_log(wires)
    one = verify_bytes(data, jobs=1, partial=True)
    assert one.code == 1 and one.doc["index"] == index
    assert verify_bytes(data, jobs=2, partial=True) == one
    path = tmp_path / "bad.log"
    path.write_bytes(data)
    assert main(["verify", "--jobs", "2", "--partial", str(path)]) == 1


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "two", "", " 2x"])
def test_a_wrong_number_of_jobs_is_one_line_and_exit_2(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fair.log"
    path.write_bytes(encode_log(three_hands()))
    assert main(["verify", f"--jobs={value}", str(path)]) == EXIT_NOT_A_LOG
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("buraco-p2p verify: --jobs"), err


def test_jobs_default_to_every_core() -> None:
    assert parse_jobs(None) >= 1
    assert parse_jobs("3") == 3


class _Answered:
    def __init__(self, n: int) -> None:
        self._n = n

    def ready(self) -> bool:
        return True

    def get(self) -> list[bool]:
        return [True] * self._n


class _RecordingPool:
    """A pool that keeps every batch it is sent and says each check passed."""

    def __init__(self) -> None:
        self.batches: list[list[bytes]] = []

    def apply_async(self, func: object, args: tuple[list[bytes]]) -> _Answered:
        self.batches.append(args[0])
        return _Answered(len(args[0]))


@cache
def batches_sent() -> tuple[tuple[bytes, ...], ...]:
    """The batches the provisional pass sends for the fair three hands."""
    pool = _RecordingPool()
    deferred = _Deferred(pool, _Settled(None))  # type: ignore[arg-type]
    _replay(three_hands(), deferred, deferred.at_entry)
    assert deferred.settle()
    return tuple(tuple(batch) for batch in pool.batches)


def test_a_hands_shuffles_go_to_one_worker_in_order_and_its_shares_are_shared_out() -> None:
    """One worker checks all of a hand's shuffles, one after the other (each takes the
    previous one's output, which that worker keeps folded); the share proofs stay spread."""
    shuffles: dict[int, list[int]] = {}
    share_batches: dict[int, set[int]] = {}
    for number, batch in enumerate(batches_sent()):
        checks = [pickle.loads(blob) for blob in batch]
        kinds = {check[0] for check in checks}
        if "shuffle" in kinds:
            assert kinds == {"shuffle"}, kinds
            hands = {check[1].hand for check in checks}
            assert len(hands) == 1 and hands.isdisjoint(shuffles), (hands, shuffles)
            indices = [check[1].log_index for check in checks]
            assert indices == sorted(indices)
            shuffles[hands.pop()] = indices
            for before, after in itertools.pairwise(checks):
                assert after[3] == before[4]  # the next shuffle's input is this one's output
        for check in checks:
            if check[0] == "shares":
                share_batches.setdefault(check[4].hand, set()).add(number)
    assert sorted(shuffles) == [0, 1, 2]
    assert all(len(indices) == PARTIES for indices in shuffles.values())
    assert all(len(numbers) > 1 for numbers in share_batches.values()), share_batches


def test_the_pools_terminate_ends_a_worker_whatever_handler_the_audit_inherited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The replay's audit process exits through a Python handler on SIGTERM; its forked
    workers must not inherit it. A worker that did could swallow the exception that handler
    raises and stay blocked on the task queue's lock, which `terminate` holds while it joins
    the workers: the audit hung at its end, its last count on the replay's screen for good
    (seen beside two busy processes, one run in a dozen). Each worker takes SIGTERM's
    default (and ignores Ctrl-C), whatever this process does with them."""
    monkeypatch.setattr(verify_jobs_module.threading, "active_count", lambda: 1)  # fork them
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        pool = _start_pool(2)
        try:
            seen = pool.map(_signal_dispositions, range(4), chunksize=1)
        finally:
            pool.terminate()
            pool.join()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert set(seen) == {(True, True)}  # SIGTERM's default, Ctrl-C ignored, in every worker


def _signal_dispositions(_: int) -> tuple[bool, bool]:
    return (signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
            signal.getsignal(signal.SIGINT) == signal.SIG_IGN)  # fmt: skip


def test_a_worker_stops_a_batch_at_its_first_failed_check() -> None:
    """The checks after a failed one are not needed (the replay that finds the bad entry
    stops there): they are answered as not passed, without being run."""
    batch = next(list(b) for b in batches_sent() if b"shuffle" in b[0][:64])
    assert _check_batch(batch) == [True] * len(batch)
    kind, ctx, table_key, deck_in, deck_out, proof = pickle.loads(batch[0])
    bad = bytearray(proof)
    bad[-1] ^= 0x01
    batch[0] = pickle.dumps((kind, ctx, table_key, deck_in, deck_out, bytes(bad)))
    assert _check_batch(batch) == [False] * len(batch)
