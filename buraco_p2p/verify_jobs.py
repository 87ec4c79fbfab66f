"""`buraco-p2p verify --jobs N`: a log's proofs checked by N processes, the verdict that of one.

Most of the time of an audit goes to three proof checks of the deck (the shuffle proofs, about
56% on a 24-hand match; the Chaum-Pedersen share proofs, 22%; the Schnorr key proofs, little),
all pure functions of the entry and of values the replay already holds. The rest (signatures,
the engine, the bookkeeping) is a sequential walk down the log. So:

1. The main process replays the log once through the same `Table` a peer uses, with a
   `ProofChecks` (`buraco_p2p.crypto.proofcheck`) that does not run the deck's proof checks
   but sends each one, with exactly the arguments the deck would have checked, to a pool of
   N worker processes (in batches, in log order), and carries on as if it had passed. This
   pass is provisional.
2. Each worker runs the real checks and answers pass or fail for each.
3. If every check passed, the provisional replay was the real one, refusal included: its
   result (or the first bad entry it found) is the verdict. If any check failed (or a worker
   could not answer), the log is replayed again, in this process, with every check run here
   except those the workers passed for exactly the same arguments (their serialised form is
   the key). That replay is `--jobs 1`'s, so the first bad entry, its author and its reason
   are the same; only the checks already known to pass are not repeated.

The batches follow the checks' cost, but for the shuffles: those of one hand are one batch,
which one worker checks in log order. Each shuffles the deck the one before it output, and a
process that has verified a deck as a shuffle's output keeps it folded for its check as the
next one's input, and makes the hand's own values once (`buraco_p2p.crypto.shuffle`); sent
one by one to whichever worker is free, most of that would be made again by another. The
hand's share proofs, many and small, are still shared out. A shuffle's output deck travels
decoded: this process decodes it (every point validated) to go on with the replay, so the
worker checks only the proof.

A failed check seen while the first pass is still running stops that pass at once, and the
workers' checks past the failure are dropped, so a bad entry in an early hand is found early.

`progress(n)` says how much of the log is settled while the audit runs: its first n entries
passed every check, theirs answered by the workers too (n only grows, and never reaches a bad
entry). A viewer can show a log's first hands while the rest is still being checked
(`buraco-p2p replay`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.pool import AsyncResult, Pool
from typing import Any, Final

from buraco_p2p.crypto.elgamal import Ciphertext, InvalidCiphertext, decode_deck
from buraco_p2p.crypto.group import Point
from buraco_p2p.crypto.keys import KeyAnnouncement
from buraco_p2p.crypto.proofcheck import CHECK_NOW, ProofChecks
from buraco_p2p.crypto.shares import ShareBatch
from buraco_p2p.crypto.shuffle import ShuffleProof, decode_and_verify, verify_shuffle
from buraco_p2p.crypto.transcript import ProofContext
from buraco_p2p.session import LogError, Replay, replay

__all__ = [
    "POOL_FROM_ENTRIES",
    "BadEntry",
    "Progress",
    "available_cores",
    "parse_jobs",
    "replay_log",
]

# A log shorter than this (about two hands at four seats) replays in well under a second:
# starting processes would cost more than it saves.
POOL_FROM_ENTRIES: Final = 600

# How much checking goes to a worker at a time, in units of about one share proof: a shuffle
# of a 108-card deck costs about 100. Small enough to keep every worker busy until the end,
# large enough that sending the batch costs little beside checking it.
_BATCH_COST: Final = 400
# Checks held this many entries are sent: they are not kept waiting for the batch to fill, so
# how far the log is settled good follows the walk.
_HELD_ENTRIES: Final = 200

_KEY: Final = "key"
_SHUFFLE: Final = "shuffle"
_SHARES: Final = "shares"


class BadEntry(Exception):
    """The first bad entry of a log: its `LogError` and its position in the file (an
    entry's own index field may claim another)."""

    def __init__(self, error: LogError, position: int) -> None:
        super().__init__(error, position)
        self.error = error
        self.position = position


class VerifierFailed(Exception):
    """The verifier itself failed (not a refusal) at this position of the log: a fault of
    this program, which accuses no party."""

    def __init__(self, error: Exception, position: int) -> None:
        super().__init__(error, position)
        self.error = error
        self.position = position


def available_cores() -> int:
    """The processors this process may run on (`--jobs`' default)."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return int(count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def parse_jobs(text: str | None) -> int:
    """`--jobs`' value: a whole number of processes, 1 or more (none: every core). Raises
    `ValueError` with a one-line reason otherwise."""
    if text is None:
        return available_cores()
    try:
        jobs = int(text, 10)
    except ValueError:
        raise ValueError(f"--jobs takes a whole number of processes, not {text!r}") from None
    if jobs < 1:
        raise ValueError(f"--jobs takes 1 or more processes, not {jobs}")
    return jobs


Progress = Callable[[int], None]


def replay_log(
    wires: Sequence[bytes],
    jobs: int = 1,
    *,
    pool_from: int = POOL_FROM_ENTRIES,
    progress: Progress | None = None,
) -> Replay:
    """The log's replay, as `session.replay` gives it; raises `BadEntry` for the first bad
    entry. With `jobs` > 1 (and a log of at least `pool_from` entries) the proof checks run on
    `jobs` worker processes; the answer is the same. `progress(n)`: the first n entries are
    settled good (see the module docstring)."""
    settled = _Settled(progress)
    if jobs <= 1 or len(wires) < pool_from:
        return _replay(wires, CHECK_NOW, settled)
    try:
        pool = _start_pool(jobs)
    except OSError:
        return _replay(wires, CHECK_NOW, settled)  # no processes to be had: the same, alone
    with _stopping(pool):
        deferred = _Deferred(pool, settled)
        try:
            result = _replay(wires, deferred, deferred.at_entry)
        except _FailureSeen:
            pass  # a check failed: the replay below finds where
        except Exception:
            # a refusal (or anything else) after checks that all passed is the real one
            if deferred.settle():
                raise
        else:
            if deferred.settle():
                settled(len(wires))
                return result
        deferred.settle()
        passed = deferred.passed
    return _replay(wires, _Known(passed), settled)


class _Settled:
    """`progress`, told only when the settled prefix grows."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self.count = 0

    def __call__(self, n: int) -> None:
        if n > self.count:
            self.count = n
            if self._progress is not None:
                self._progress(n)


def _replay(wires: Sequence[bytes], checks: ProofChecks, at_entry: Progress) -> Replay:
    """`at_entry(k)` is called as entry k is about to be fed, every entry before it applied
    (and `at_entry(len(wires))` once the last one is)."""
    fed = 0

    def feed() -> Iterator[bytes]:
        nonlocal fed
        for w in wires:
            at_entry(fed)
            fed += 1
            yield w
        at_entry(fed)

    try:
        return replay(feed(), checks=checks)
    except LogError as exc:
        raise BadEntry(exc, fed - 1) from None
    except _FailureSeen:
        raise
    except Exception as exc:  # a fault of the verifier, never evidence against a party
        raise VerifierFailed(exc, fed - 1) from exc


def _start_pool(jobs: int) -> Pool:
    # Where the system has fork and this process has no other thread, the workers are forked
    # (they start at once, with everything imported); elsewhere started the default way.
    single = threading.active_count() == 1
    method = "fork" if single and "fork" in multiprocessing.get_all_start_methods() else None
    return multiprocessing.get_context(method).Pool(jobs, _worker_signals)


def _worker_signals() -> None:
    """A worker's signals. Ctrl-C is the audit's to answer, which stops the workers: they
    ignore it themselves. The pool's `terminate` (SIGTERM) ends a worker at once, whatever it
    is doing, as the system's default does: a Python handler a forked worker inherits (the
    replay's audit process exits through one, `replay.checking`) can see the exception it
    raises swallowed (raised in a finalizer, say), and the worker then waits for a task on
    the queue lock that the terminating pool holds, while the pool waits for the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def _stopping(pool: Pool) -> Iterator[Pool]:
    """The pool, its workers stopped on the way out (checks still queued are not needed)."""
    try:
        yield pool
    finally:
        pool.terminate()
        pool.join()


# ---------------------------------------------------------------------- the two kinds of checks


def _job(kind: str, *args: object) -> bytes:
    """A check and its arguments as bytes: what a worker is sent, and (hashed) the key of
    its answer."""
    out = io.BytesIO()
    _JobPickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump((kind, *args))
    return out.getvalue()


class _JobPickler(pickle.Pickler):
    """Points travel as their encodings, rebuilt without decoding them again: a `Point` is
    valid by construction (see `buraco_p2p.crypto.group`), and the worker is this program
    (the checks' arguments are this process's values, never a file's bytes: a shuffle's output
    deck is sent as the points this process decoded, and validated, from them). Decoding each
    one again would cost a tenth of the workers' time."""

    def reducer_override(self, obj: object) -> Any:
        if type(obj) is Point:
            return (_valid_point, (obj.to_bytes(),))
        return NotImplemented


def _valid_point(encoding: bytes) -> Point:
    return Point.from_checked_bytes(encoding)


def _digest(blob: bytes) -> bytes:
    return hashlib.sha256(blob).digest()


def _run(kind: str, *args: Any) -> None:
    """One check as the deck runs it (`CHECK_NOW`); raises if it fails. A shuffle's comes
    with its output deck decoded by the main process (`_Deferred.shuffle`), which is the
    first step of `decode_and_verify`: the rest of it is run here."""
    if kind == _KEY:
        CHECK_NOW.key(*args)
    elif kind == _SHUFFLE:
        _shuffle_decoded(*args)
    elif kind == _SHARES:
        CHECK_NOW.shares(*args)
    else:
        raise ValueError(f"no check {kind!r}")


def _shuffle_decoded(
    ctx: ProofContext,
    table_key: Point,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    proof: bytes,
) -> None:
    """`decode_and_verify` of a shuffle whose output deck decoded to `deck_out`."""
    n = len(deck_in)
    verify_shuffle(ctx, table_key, deck_in, deck_out, ShuffleProof.from_bytes(proof, n))


def _check_batch(blobs: list[bytes]) -> list[bool]:
    """A worker's answer for each check, in order: passed, or not (failed, or could not be
    run; the main process then runs it itself, so any exception here only costs time). The
    checks after one that did not pass are not run: the replay that finds the bad entry stops
    at or before it, and never asks for them."""
    out = []
    for blob in blobs:
        try:
            _run(*pickle.loads(blob))
        except Exception:
            break
        out.append(True)
    return out + [False] * (len(blobs) - len(out))


class _FailureSeen(Exception):
    """A worker failed a check while the provisional replay was still running."""


class _Deferred:
    """The provisional pass's `ProofChecks`: each check goes to the pool, and the replay goes
    on as if it passed (a shuffle's output deck decoded as the real check would return it)."""

    def __init__(self, pool: Pool, settled: _Settled) -> None:
        self._pool = pool
        self._settled = settled
        self._at = 0  # the position of the entry being applied
        self._pending: list[bytes] = []
        self._pending_from = 0  # the position of the entry of the first pending check
        self._pending_hand: tuple[bytes, int] | None = None  # (table, hand) of pending shuffles
        self._cost = 0
        # each batch sent: its checks, their answer, the position of its first check's entry
        self._sent: list[tuple[list[bytes], AsyncResult[list[bool]], int]] = []
        self._seen = 0  # batches answered and looked at
        self.passed: set[bytes] = set()
        self.failed = False
        self.result: Replay

    def at_entry(self, k: int) -> None:
        """Entry k is about to be applied: the entries before it are settled up to the
        first whose checks are not all answered yet (a failure seen stops this pass)."""
        self._at = k
        self._look(wait=False)
        if self.failed:
            raise _FailureSeen

    def _tell(self) -> None:
        if self.failed:
            return  # the replay that finds the bad entry says how far the log is good
        if self._seen < len(self._sent):
            self._settled(self._sent[self._seen][2])
        elif self._pending:
            self._settled(self._pending_from)
        else:
            self._settled(self._at)

    def key(self, ann: KeyAnnouncement) -> None:
        self._defer(_job(_KEY, ann), 1)

    def shuffle(
        self,
        ctx: ProofContext,
        table_key: Point,
        deck_in: Sequence[Ciphertext],
        deck_out: bytes,
        proof: bytes,
    ) -> tuple[Ciphertext, ...]:
        try:
            deck = decode_deck(deck_out, len(deck_in))
        except InvalidCiphertext:
            # refused before any proof is read: the real check gives the reason at once
            return decode_and_verify(ctx, table_key, deck_in, deck_out, proof)
        blob = _job(_SHUFFLE, ctx, table_key, tuple(deck_in), deck, proof)
        self._defer(blob, len(deck), hand=(ctx.table_id, ctx.hand))
        return deck

    def shares(
        self, public: Point, cts: Sequence[Ciphertext], batch: ShareBatch, ctx: ProofContext
    ) -> None:
        self._defer(_job(_SHARES, public, tuple(cts), batch, ctx), 1 + len(cts) // 8)

    def _defer(self, blob: bytes, cost: int, *, hand: tuple[bytes, int] | None = None) -> None:
        """Hold a check for the next batch. A shuffle's (`hand` its table and hand) joins a
        batch of that hand's shuffles only, sent whole when a check of another kind or hand
        comes (so one worker checks them all, in order); the others are sent by cost."""
        if self._pending and (
            hand != self._pending_hand or self._at - self._pending_from >= _HELD_ENTRIES
        ):
            self._flush()
        if not self._pending:
            self._pending_from = self._at
            self._pending_hand = hand
        self._pending.append(blob)
        self._cost += cost
        if hand is None and self._cost >= _BATCH_COST:
            self._flush()
            self._look(wait=False)
            if self.failed:
                raise _FailureSeen

    def _flush(self) -> None:
        if self._pending:
            blobs, self._pending, self._cost = self._pending, [], 0
            answer = self._pool.apply_async(_check_batch, (blobs,))
            self._sent.append((blobs, answer, self._pending_from))

    def _look(self, *, wait: bool) -> None:
        """Take the answers of the batches answered so far, in order (all of them with
        `wait`, up to the first failure)."""
        while self._seen < len(self._sent) and not self.failed:
            blobs, answer, _ = self._sent[self._seen]
            if not wait and not answer.ready():
                break
            try:
                verdicts = answer.get()
            except Exception:
                verdicts = [False] * len(blobs)
            for blob, ok in zip(blobs, verdicts, strict=True):
                if ok:
                    self.passed.add(_digest(blob))
                else:
                    self.failed = True
            self._seen += 1
            self._tell()
        self._tell()

    def settle(self) -> bool:
        """Wait for the workers' answers (up to the first batch with a failure); whether
        every check passed."""
        self._flush()
        self._look(wait=True)
        return not self.failed


class _Known:
    """The second pass's `ProofChecks`: every check runs here, but for those the workers
    passed with exactly these arguments."""

    def __init__(self, passed: set[bytes]) -> None:
        self._passed = passed

    def _known(self, kind: str, *args: object) -> bool:
        return _digest(_job(kind, *args)) in self._passed

    def key(self, ann: KeyAnnouncement) -> None:
        if not self._known(_KEY, ann):
            CHECK_NOW.key(ann)

    def shuffle(
        self,
        ctx: ProofContext,
        table_key: Point,
        deck_in: Sequence[Ciphertext],
        deck_out: bytes,
        proof: bytes,
    ) -> tuple[Ciphertext, ...]:
        try:
            deck = decode_deck(deck_out, len(deck_in))
        except InvalidCiphertext:
            return CHECK_NOW.shuffle(ctx, table_key, deck_in, deck_out, proof)
        if self._known(_SHUFFLE, ctx, table_key, tuple(deck_in), deck, proof):
            return deck
        return CHECK_NOW.shuffle(ctx, table_key, deck_in, deck_out, proof)

    def shares(
        self, public: Point, cts: Sequence[Ciphertext], batch: ShareBatch, ctx: ProofContext
    ) -> None:
        if not self._known(_SHARES, public, tuple(cts), batch, ctx):
            CHECK_NOW.shares(public, cts, batch, ctx)
