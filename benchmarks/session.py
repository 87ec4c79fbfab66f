"""Speed of the table protocol: N sans-IO session peers in one process, printed as one JSON object.

    python benchmarks/session.py [--rules P] [--seed S] [--target POINTS] [--verify-only]

The peers run on a discrete-event simulator, so the figures are those of N machines on a
network, not of one process taking turns:

- Each peer has its own virtual timeline. Its handling of each input (a delivered message, a
  clock reading, its bot's decision) is timed in CPU time (`time.thread_time`) and charged to
  that timeline: the peer starts an input when both the input has arrived and the peer is idle,
  and whatever the handling sends leaves at its end. So two peers verifying at once overlap, as
  they would on two machines, and nobody waits for a peer that is busy elsewhere.
- Every message arrives after a fixed one-way delay (no sleeping: delivery is an event at
  `sent + delay` on the receiver's timeline).
- Legs: a second run of the first hand charges no CPU time at all and delays every message by
  exactly 1, so the time between two events is the number of one-way delays on the critical
  path between them (whatever arrived last decides when each step can go on).

Keys (the goals in brackets):
- hand_setup_s [<= 0.5], hand_setup_s_50ms [<= 0.85]: from the first per-hand key leaving a peer
  to the first move of the hand being possible (the first player's bot is asked to move), at
  delay 0 (the mean over the match's hands; hand_setup_s_max the slowest) and 50 ms (the first
  hand). hand_setup_s_2p / _6p for other seat counts, null until the rules accept them.
- setup_legs [<= 7]: one-way delays on that critical path; draw_legs [<= 2]: from a stock draw
  leaving the drawer until the drawer knows the card (the most over the hand's draws).
- move_p50_ms [<= 5], move_p99_ms [<= 20]: at delay 0, from a move leaving its author (its bot's
  thinking excluded) until the next decision is possible (a bot, the same or the next, is asked
  to move), over every move of the match but the last of each hand.
- cpu_s_per_hand: CPU seconds per peer per hand (all of it: setup, moves, end of hand, bots).
- peak_rss_mb: this process's peak resident set (all N peers in it).
- verify_match_s [<= 5]: `buraco-p2p verify` (`audit.verify_bytes`) on the log of a timed
  match of 24 hands (`--verify-hands`; rules `hands=24 minutes=600`, its clocks never reaching
  the time: a round of clocks after every hand), wall-clock seconds with `--jobs` at its
  default (every core: verify_jobs_default); verify_match_s_jobs1 and _jobs2 with one and two
  processes. verify_match_cpu_s_jobs1 / _jobs2: the CPU seconds of those runs, workers
  included, which a shared machine does not inflate; verify_match_idle_s_jobs1 / _jobs2 what
  they come to on that many idle cores (the longer of the main process's CPU time and the
  total shared out). verify_match_entries, verify_match_hands: the log audited.
- sim_schedules_per_s: schedules of the adversarial simulator (`python -m sim`, over the real
  peers and policy) run per CPU second of one process, after the honest tables they fork are
  played; sim_schedules_per_wall_s the same by the clock. `--sim-only` for these alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import itertools
import json
import math
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from buraco_p2p.audit import verify_bytes
from buraco_p2p.bots import make_bot
from buraco_p2p.bots.selfplay import session_match
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import DrawStock, Move
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import RuleSet, get_preset
from buraco_p2p.session import (
    CardSeen,
    Fault,
    HandEnded,
    Output,
    Peer,
    YourTurn,
    decode_entry,
    make_genesis,
)
from buraco_p2p.verify_jobs import available_cores

CpuClock = Callable[[], float]


class Node(Protocol):
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
        peers: Sequence[Node],
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
    k = max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))
    return ordered[k]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0



# ---------------------------------------------------------------------- session peers on it

START = Wake("start")
WORK = Wake("work")
THINK = Wake("think")


class SessionNode:
    """One session peer and its bot as the simulator's `Node`: a received entry is filed
    (`receive`, defer), the work it makes possible is done one entry per input (`work`), so
    what the peer can send leaves as soon as it is made; its bot thinks on `YourTurn`."""

    def __init__(self, peer: Peer, seed: int) -> None:
        self.peer = peer
        self.party = peer.party
        self.bot = make_bot("heuristic")
        self.rng = random.Random(seed)
        self.work_pending = False
        self.out = Output()
        self.moved: Move | None = None
        self.bot_cpu = 0.0

    def handle(self, now: float, item: object) -> Sequence[tuple[int | None, object]]:
        peer = self.peer
        self.moved = None
        if item is START:
            out = peer.start(now, defer=True)
        elif item is WORK:
            self.work_pending = False
            out = peer.work(now)
        elif item is THINK:
            view = peer.table.view
            assert view is not None
            t0 = time.thread_time()
            move = self.bot.choose_move(view, self.rng)
            self.bot_cpu = time.thread_time() - t0
            self.moved = move
            out = peer.play(move, now, defer=True)
        else:
            assert isinstance(item, bytes)
            out = peer.receive(item, now, defer=True)
        self.out = out
        sent: list[tuple[int | None, object]] = [(None, w) for w in out.send]
        if peer.busy and not self.work_pending:
            self.work_pending = True
            sent.append((self.party, WORK))
        if any(isinstance(e, YourTurn) for e in out.events):
            sent.append((self.party, THINK))
        return sent


@dataclass
class Run:
    """What one simulated match measured."""

    setups: list[float] = field(default_factory=list)  # seconds per hand
    moves_ms: list[float] = field(default_factory=list)
    draws: list[float] = field(default_factory=list)  # draw sent -> drawer knows the card
    hands: int = 0
    cpu: list[float] = field(default_factory=list)
    log: list[bytes] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)


def identities(n: int) -> list[Identity]:
    return [Identity.from_seed(bytes([0xB0 + i]) * 32, f"bench{i}") for i in range(n)]


def simulate(
    rules: RuleSet, delay_s: float, seed: int, *, setup_only: bool = False,
    first_hand: bool = False, free_cpu: bool = False, max_steps: int = 2_000_000,
) -> Run:
    """Play a match on the simulator with a one-way delay of `delay_s`: all of it, or until
    the first move of the first hand is possible (`setup_only`), or the first hand's end
    (`first_hand`). With `free_cpu` every input costs no time, so times count delays only:
    with a delay of 1, the number of one-way legs on each critical path."""
    n = rules.players
    ids = identities(n)
    genesis = make_genesis(f"bench-table-{seed:04d}".encode()[:16].ljust(16, b"."), ids, rules)
    nodes = [
        SessionNode(Peer(genesis, ident, DeterministicRandomSource(bytes([seed, i]) * 16)), seed)
        for i, ident in enumerate(ids)
    ]
    sim = Simulator(nodes, delay_s, (lambda: 0.0) if free_cpu else time.thread_time)
    run = Run()
    setup_start: list[float | None] = [None]  # when the hand's first keys entry was sent
    in_hand = [False]
    last_move: list[float | None] = [None]  # when the last move left its author
    draw_sent: dict[int, float] = {}  # drawer party -> when it sent the draw
    done = [False]

    def observe(h: Handled) -> None:
        node = nodes[h.seat]
        out = node.out
        if (
            setup_start[0] is None
            and not in_hand[0]
            and any(decode_entry(w).kind == "keys" for w in out.send)
        ):
            setup_start[0] = h.end
        if node.moved is not None:
            last_move[0] = h.start + node.bot_cpu
            if isinstance(node.moved, DrawStock):
                draw_sent[node.party] = h.end
        for ev in out.events:
            if isinstance(ev, YourTurn):
                start = setup_start[0]
                if start is not None:
                    run.setups.append(h.end - start)
                    setup_start[0] = None
                    in_hand[0] = True
                    done[0] = setup_only
                elif last_move[0] is not None:
                    run.moves_ms.append((h.end - last_move[0]) * 1000)
                last_move[0] = None
            elif isinstance(ev, CardSeen) and node.party in draw_sent:
                run.draws.append(h.end - draw_sent.pop(node.party))
            elif isinstance(ev, HandEnded):
                if in_hand[0]:
                    run.hands += 1
                    done[0] = done[0] or first_hand
                in_hand[0] = False
                last_move[0] = None
            elif isinstance(ev, Fault):
                run.faults.append(str(ev.error))

    sim.observers.append(observe)
    for i in range(n):
        sim.inject(i, START)
    sim.run(max_steps, stop=lambda h: done[0])
    run.cpu = [line.cpu for line in sim.lines]
    run.log = [e.wire for e in nodes[0].peer.log]
    return run


def _rules(preset: str, target: int | None, players: int | None = None) -> RuleSet:
    """The preset, its target overridden; with `players`, for that many seats (a `RuleError`
    where the rules do not allow it)."""
    rules = get_preset(preset)
    if target is not None:
        rules = dataclasses.replace(rules, target_score=target)
    if players is not None and players != rules.players:
        rules = rules.with_overrides({"players": players})
    return rules


def timed_match_log(preset: str, hands: int) -> list[bytes]:
    """A timed match of `hands` hands among in-memory session peers (`selfplay --log`): a
    round of clocks after every hand, the clocks (one millisecond per delivery) far from the
    time limit, so the match ends by its number of hands."""
    rules = get_preset(preset).with_overrides({"hands": hands, "minutes": 600})
    ticks = itertools.count()
    log = session_match(
        rules, [make_bot("heuristic")] * rules.players, 1, clock=lambda: next(ticks) / 1000
    )
    return [e.wire for e in log]


def verify_figures(preset: str, hands: int) -> dict[str, Any]:
    """`verify` on a timed match of `hands` hands, with one process, two, and the default."""
    data = encode_log(timed_match_log(preset, hands))
    out: dict[str, Any] = {"verify_log_bytes": len(data)}
    default = available_cores()
    for label, jobs in (("_jobs1", 1), ("_jobs2", 2), ("", default)):
        main0, workers0 = _cpu()
        t0 = time.perf_counter()
        verdict = verify_bytes(data, jobs=jobs)
        out[f"verify_match_s{label}"] = round(time.perf_counter() - t0, 3)
        main1, workers1 = _cpu()
        main_cpu, total = main1 - main0, main1 + workers1 - main0 - workers0
        if label:
            out[f"verify_match_cpu_s{label}"] = round(total, 3)
            # on `jobs` idle cores: the main process's walk, or everything shared out
            out[f"verify_match_idle_s{label}"] = round(max(main_cpu, total / jobs), 3)
        if verdict.code != 0:
            out["verify_error"] = str(verdict.doc)[:300]
        out["verify_exit"] = verdict.code
        out["verify_match_entries"] = verdict.doc.get("entries")
        out["verify_match_hands"] = verdict.doc.get("hands")
    out["verify_jobs_default"] = default
    return out


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its finished child processes (the workers)."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime, kids.ru_utime + kids.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rules", default="classic", help="preset (default classic)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--target", type=int, default=None,
        help="override the target score (a shorter match); default: the preset's",
    )
    parser.add_argument(
        "--verify-hands", type=int, default=24,
        help="hands of the timed match whose log `verify` audits (default 24)",
    )
    parser.add_argument(
        "--verify-only", action="store_true", help="only the verify_* figures",
    )
    parser.add_argument(
        "--sim-schedules", type=int, default=200,
        help="schedules of the simulator timed for sim_schedules_per_s (default 200)",
    )
    parser.add_argument("--sim-only", action="store_true", help="only the sim_* figures")
    args = parser.parse_args(argv)
    rules = _rules(args.rules, args.target)
    out: dict[str, Any] = {"rules": args.rules, "target_score": rules.target_score}
    if args.verify_only:
        print(json.dumps(out | verify_figures(args.rules, args.verify_hands)))
        return 0
    if args.sim_only:
        print(json.dumps(out | sim_figures(args.sim_schedules)))
        return 0

    match = simulate(rules, 0.0, args.seed)
    out["hands"] = match.hands
    out["hand_setup_s"] = round(statistics.mean(match.setups), 3)
    out["hand_setup_s_max"] = round(max(match.setups), 3)
    out["move_p50_ms"] = round(percentile(match.moves_ms, 0.50), 2)
    out["move_p99_ms"] = round(percentile(match.moves_ms, 0.99), 2)
    out["moves_timed"] = len(match.moves_ms)
    out["cpu_s_per_hand"] = round(sum(match.cpu) / len(match.cpu) / max(1, match.hands), 3)
    out["faults"] = len(match.faults)

    slow = simulate(rules, 0.050, args.seed, setup_only=True)
    out["hand_setup_s_50ms"] = round(slow.setups[0], 3)

    legs = simulate(rules, 1.0, args.seed, first_hand=True, free_cpu=True)
    out["setup_legs"] = round(legs.setups[0])
    out["draw_legs"] = round(max(legs.draws)) if legs.draws else None

    out.update(verify_figures(args.rules, args.verify_hands))
    for count in (2, 6):
        key = f"hand_setup_s_{count}p"
        try:
            other = _rules(args.rules, args.target, count)
            run = simulate(other, 0.0, args.seed, setup_only=True)
        except Exception as exc:  # the session or the deck may not play this count yet
            out[key] = None
            out[f"{key}_error"] = f"{type(exc).__name__}: {exc}"[:200]
            continue
        out[key] = round(run.setups[0], 3)
    out.update(sim_figures(args.sim_schedules))
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    print(json.dumps(out))
    return 0


def sim_figures(count: int) -> dict[str, Any]:
    """The adversarial simulator's pace (`python -m sim`): schedules per second on one core,
    over `count` schedules from seed 0, once every honest table they fork has been played (the
    first schedules of each seat count play it, which is not what a soak pays per schedule)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's `sim`
    from sim import explore

    explore(0, count=min(count, 20))  # the honest tables, played once
    start = time.process_time()
    wall = time.monotonic()
    done = explore(10_000, count=count)
    cpu = time.process_time() - start
    return {
        "sim_schedules": len(done),
        "sim_schedules_per_s": round(len(done) / cpu, 2) if cpu else None,
        "sim_schedules_per_wall_s": round(len(done) / (time.monotonic() - wall), 2),
    }


if __name__ == "__main__":
    raise SystemExit(main())
