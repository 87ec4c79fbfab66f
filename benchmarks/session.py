"""Speed of the table protocol: N sans-IO session peers in one process, printed as one JSON object.

    python benchmarks/session.py [--hands N] [--seed S] [--rules P]

The peers run on a discrete-event simulator, so the figures are those of N machines on a
network, not of one process taking turns:

- Each peer has its own virtual timeline. Its handling of each input (a delivered message, a
  clock reading, its bot's decision) is timed in CPU time (`time.thread_time`) and charged to
  that timeline: the peer starts an input when both the input has arrived and the peer is idle,
  and whatever the handling sends leaves at its end. So two peers verifying at once overlap, as
  they would on two machines, and nobody waits for a peer that is busy elsewhere.
- Every message arrives after a fixed one-way delay (no sleeping: delivery is an event at
  `sent + delay` on the receiver's timeline).
- Legs: every message carries a Lamport depth (one more than the deepest input its sender had
  handled). The number of one-way delays on a critical path is the difference of depths between
  its two ends; with zero CPU cost it is exactly the path's length divided by the delay.

Keys (the goals in brackets):
- hand_setup_s [<= 0.5], hand_setup_s_50ms [<= 0.85]: from the first per-hand key leaving a peer
  to the first move of the hand being possible (the first player's bot is asked to move), at
  delay 0 and 50 ms; the mean over the hands played. hand_setup_s_2p / _6p for other counts
  where the engine plays them.
- setup_legs [<= 7]: one-way delays on that critical path; draw_legs [<= 2]: from a stock draw
  leaving the drawer until the drawer knows the card.
- move_p50_ms [<= 5], move_p99_ms [<= 20]: at delay 0, from a move leaving its author until the
  next decision is possible (the next bot is asked to move, or the hand is over), over every
  move of the match.
- cpu_s_per_hand: CPU seconds per peer per hand (all of it: setup, moves, end of hand, bots).
- peak_rss_mb: this process's peak resident set (all N peers in it).
- verify_match_s [<= 5]: `buraco-p2p verify` on the whole match log written by the run.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

CpuClock = Callable[[], float]


class Peer(Protocol):
    """What the simulator drives: one peer, sans-IO. `handle` takes the peer's virtual time and
    one input and returns what the peer sends: (destination seat or None for every other seat,
    payload). Inputs are whatever the peer itself defines (messages from others, its own
    `Wake` reminders)."""

    def handle(self, now: float, item: object) -> Sequence[tuple[int | None, object]]: ...


@dataclass(frozen=True, slots=True)
class Wake:
    """An input a peer schedules for itself (its bot's turn to think, a timer), delivered with no
    network delay on its own timeline."""

    what: str
    data: object = None


@dataclass(order=True, slots=True)
class _Event:
    at: float
    seq: int
    dest: int = field(compare=False)
    item: object = field(compare=False)
    depth: int = field(compare=False)


@dataclass(slots=True)
class Timeline:
    """One peer's machine: when it is next idle, the CPU it has spent, its Lamport depth."""

    free_at: float = 0.0
    cpu: float = 0.0
    depth: int = 0
    handled: int = 0


@dataclass(frozen=True, slots=True)
class Handled:
    """One input handled: who, what, when it started and ended on the peer's timeline, and the
    Lamport depth of what it sent."""

    seat: int
    item: object
    start: float
    end: float
    depth: int
    sent: tuple[tuple[int | None, object], ...]


class Simulator:
    """The discrete-event loop. Deterministic for deterministic peers: ties in time are broken
    by the order of sending, and CPU times only move events on the timelines."""

    def __init__(
        self,
        peers: Sequence[Peer],
        delay_s: float,
        cpu_clock: CpuClock = time.thread_time,
    ) -> None:
        self.peers = list(peers)
        self.delay = delay_s
        self.cpu_clock = cpu_clock
        self.lines = [Timeline() for _ in self.peers]
        self._queue: list[_Event] = []
        self._seq = itertools.count()
        self.observers: list[Callable[[Handled], None]] = []

    def inject(self, seat: int, item: object, at: float = 0.0) -> None:
        """Deliver `item` to `seat` at virtual time `at` (a start signal, an outside input)."""
        heapq.heappush(self._queue, _Event(at, next(self._seq), seat, item, 0))

    def _send(self, src: int, dest: int | None, item: object, at: float, depth: int) -> None:
        if dest == src or isinstance(item, Wake):
            heapq.heappush(self._queue, _Event(at, next(self._seq), src, item, depth))
            return
        targets = range(len(self.peers)) if dest is None else (dest,)
        for t in targets:
            if t != src:
                ev = _Event(at + self.delay, next(self._seq), t, item, depth + 1)
                heapq.heappush(self._queue, ev)

    def step(self) -> Handled | None:
        """Handle the next input; None when nothing is left to deliver."""
        if not self._queue:
            return None
        ev = heapq.heappop(self._queue)
        line = self.lines[ev.dest]
        start = max(ev.at, line.free_at)
        line.depth = max(line.depth, ev.depth)
        clock = self.cpu_clock
        t0 = clock()
        sent = tuple(self.peers[ev.dest].handle(start, ev.item))
        cost = clock() - t0
        end = start + cost
        line.free_at = end
        line.cpu += cost
        line.handled += 1
        for dest, item in sent:
            self._send(ev.dest, dest, item, end, line.depth)
        done = Handled(ev.dest, ev.item, start, end, line.depth, sent)
        for obs in self.observers:
            obs(done)
        return done

    def run(self, max_steps: int, stop: Callable[[Handled], bool] | None = None) -> int:
        """Handle inputs until none is left, `stop` says so, or `max_steps` (a bound, so that a
        protocol that never settles cannot hang the benchmark: exceeding it raises)."""
        for n in range(max_steps):
            done = self.step()
            if done is None or (stop is not None and stop(done)):
                return n + 1
        raise RuntimeError(f"the table did not settle within {max_steps} inputs")

    @property
    def now(self) -> float:
        return max(line.free_at for line in self.lines)


def percentile(values: Sequence[float], q: float) -> float:
    """The `q` quantile (0..1) by the nearest-rank method."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[k]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hands", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rules", default="classic")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"hands": args.hands, "rules": args.rules}
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
