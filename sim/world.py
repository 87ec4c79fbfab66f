"""The simulated table: seats, links and one seeded scheduler of everything that happens.

Time is virtual (seconds; the table's timeout is `TIMEOUT`). Every event, a message
arriving, a seat's clock ticking, a crash, a restart, a hostile party's move, is taken from
one priority queue in time order (ties by insertion), so a seed gives one run, and the same
seed the same run. What the schedule draws from its seed:

- each link's delay (a few milliseconds to a tenth of the timeout, so messages overtake
  each other), a share of messages lost (a later `sync` finds them) or delivered twice, and
  partitions: for a while, every message between two groups is lost;
- each party's clock: its own rate (within 10 %) and offset, so two timeouts never end at
  once;
- crashes of honest parties (their peer is lost, their files kept) and restarts from the
  files;
- the hostile parties and their strategies (`sim.hostile`).

A party whose messages were never lost, delayed past a timeout or cut by a crash is
*answering*: the properties that hold only for such parties (no honest party named, the
table moving on) are checked for them (`sim.checks`).
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import get_preset
from buraco_p2p.session import make_genesis
from sim.hostile import Strategy, make_strategy
from sim.seat import Message, Seat

__all__ = ["TIMEOUT", "Params", "World"]

TIMEOUT = 1.0  # the table's timeout, in virtual seconds
TICK = 0.25  # how often a seat's clock ticks (its driver's ticker)
PRESETS = {2: "italian", 3: "classic", 4: "us", 6: "classic"}
DEALS = 2  # the deals each seat count is dealt, so their proofs are computed once
# How far into its match an honest table is when a schedule takes it over: the share of its
# log then (1.0: the log closed)
STAGES = (0.0, 0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95, 1.0)
TABLE_ID = b"simulated-table!"


@dataclass
class Params:
    """A schedule: everything about a run, drawn from its seed. Times are counted from the
    moment the schedule takes the table over (`World.fork`)."""

    seed: int
    seats: int
    deal: int  # which of the few deals the table is dealt (their proofs are shared)
    stage: int  # how far the honest table had got when the schedule takes it over
    hostile: dict[int, str]
    void_actions: list[str]
    drop: float
    dup: float
    delay: tuple[float, float]
    rates: list[float]
    crashes: list[tuple[int, float, float]]  # (party, down at, up after)
    partitions: list[tuple[frozenset[int], float, float]]  # (one side, from, to)
    heal: float  # from then on: no loss, no partition, no crash
    horizon: float  # the run ends here at the latest

    @classmethod
    def draw(
        cls, seed: int, seats: int | None = None, hostile: str | None = None
    ) -> Params:
        rng = random.Random(seed)
        n = seats if seats is not None else rng.choice([2, 3, 3, 4, 4, 4, 6])
        count = rng.choice([0, 1, 1, 1, 2]) if n > 2 else rng.choice([0, 1, 1])
        parties = rng.sample(range(n), min(count, n - 1))
        names = sorted(_strategy_names())
        hostile_map = {p: hostile or rng.choice(names) for p in parties}
        if "retired" in hostile_map.values() and 0 in hostile_map:
            hostile_map = {p if p else max(set(range(1, n)) - set(hostile_map), default=1): h
                           for p, h in hostile_map.items()}  # fmt: skip
        honest = [p for p in range(n) if p not in hostile_map]
        window = rng.uniform(1.5, 4.0)
        crashes = []
        for p in honest:
            if rng.random() < 0.15:
                crashes.append((p, rng.uniform(0.0, window), rng.uniform(0.1, 3.0)))
        partitions = []
        if rng.random() < 0.15:
            side = frozenset(rng.sample(range(n), rng.randrange(1, n)))
            begin = rng.uniform(0.0, window)
            partitions.append((side, begin, begin + rng.uniform(0.2, 2.5)))
        actions = [rng.choice(["void", "end", "void", "replace"] if p == 0 else
                              ["void", "end", "void"]) for p in range(n)]  # fmt: skip
        if "retired" in hostile_map.values():
            actions[0] = "replace"  # the host seats an heir for the party that walks out
        return cls(
            seed=seed,
            seats=n,
            deal=rng.randrange(DEALS),
            stage=rng.randrange(len(STAGES)),
            hostile=hostile_map,
            void_actions=actions,
            drop=rng.choice([0.0, 0.0, 0.01, 0.05]),
            dup=rng.choice([0.0, 0.02, 0.1]),
            delay=(0.001, rng.choice([0.01, 0.05, 0.1])),
            rates=[rng.uniform(0.9, 1.1) for _ in range(n)],
            crashes=crashes,
            partitions=partitions,
            heal=window,
            horizon=window + (6 + 3 * n) * TIMEOUT,
        )


def _strategy_names() -> list[str]:
    from sim.hostile import DRAWN

    return list(DRAWN)


def identities(n: int) -> list[Identity]:
    return [Identity.from_seed(bytes([0x51, i]) * 16, f"sim{i}") for i in range(n)]


def genesis_for(n: int) -> bytes:
    """The table's terms at `n` seats: a match of one hand (its deals differ by the parties'
    secrets, `Params.deal`)."""
    rules = get_preset(PRESETS[n]).with_overrides({"players": n, "hands": 1})
    g = make_genesis(TABLE_ID, identities(n), rules, timeout_ms=int(TIMEOUT * 1000))
    return g.wire


@dataclass(order=True)
class _Event:
    at: float
    seq: int
    what: str = field(compare=False)
    args: tuple[Any, ...] = field(compare=False)


class World:
    """One run: the seats, the links between them, and the queue of what happens next."""

    def __init__(self, params: Params) -> None:
        """A fresh table at `params.seats` seats, every party honest: what `fork` starts
        from (`honest_table`)."""
        self.params = params
        self.rng = random.Random(params.seed ^ 0x5EED)
        n = params.seats
        self.n = n
        genesis = genesis_for(n)
        ids = identities(n)
        self.seats = [
            Seat(p, ids[p], bytes([0x73, params.deal, p]) * 8 + bytes(8), genesis,
                 void_action=params.void_actions[p], timeout=TIMEOUT)
            for p in range(n)
        ]
        self.strategies: dict[int, Strategy] = {}
        self.retired: dict[int, Seat] = {}  # replaced parties: their old seats
        self.heir_ids: dict[bytes, Identity] = {}  # the identities the host made for heirs
        self.honest = list(range(n))
        self.answering = list(range(n))
        self.now = 0.0
        self.begin = 0.0  # when this schedule took the table over
        self._clock_base = [0.0] * n  # each party's clock reading at `begin`
        self.queue: list[_Event] = []
        self._seq = itertools.count()
        self.trace: list[str] = []
        self.errors: list[str] = []
        # the parties whose seats the last event could change (None: any), so the checks
        # after it look again only at what could have moved (`sim.checks.Watch`)
        self.touched: set[int] | None = None

    def fork(self, params: Params) -> World:
        """A copy of this table as it stands, taken over by the schedule `params`: its
        hostile parties, clocks, links and faults from now on (the messages on their way
        arrive as they would have)."""
        shared: dict[int, object] = {}
        for seat in self.seats:
            shared[id(seat.identity)] = seat.identity
            shared[id(seat.bot)] = seat.bot
            for ev in seat.all_events:  # frozen records of what happened: shared, not copied
                shared[id(ev)] = ev
            if seat.peer is not None:
                for k in seat.peer.table.terms.keys:
                    shared[id(k)] = k
                view = seat.peer.table.view
                if view is not None:
                    shared[id(view.oracle)] = view.oracle
        w = copy.deepcopy(self, shared)
        w.touched = None
        w._take_over(params)
        return w

    def _take_over(self, params: Params) -> None:
        n = self.n
        self._clock_base = [self.clock(p) for p in range(n)]
        self.begin = self.now
        t0 = self.now
        self.params = dataclasses.replace(
            params,
            crashes=[(p, t0 + a, b) for p, a, b in params.crashes],
            partitions=[(side, t0 + a, t0 + b) for side, a, b in params.partitions],
            heal=t0 + params.heal,
            horizon=t0 + params.horizon,
        )
        self.rng = random.Random(params.seed ^ 0x5EED)
        for p, seat in enumerate(self.seats):
            seat.void_action = params.void_actions[p]
            seat.policy.void_action = params.void_actions[p]
        self.strategies = {}
        for p, name in params.hostile.items():
            strategy = make_strategy(name, random.Random(params.seed * 31 + p), n, p)
            strategy.moments = [t0 + m for m in strategy.moments]
            strategy.after = t0 + strategy.after
            self.strategies[p] = strategy
            self.seats[p].moving = strategy.moving
            self.seats[p].strategy = strategy
        if 0 not in params.hostile and params.void_actions[0] == "replace":
            self.seats[0].enable_replace(self._heir_identity)
        self.honest = [p for p in range(n) if p not in params.hostile]
        # honest parties that never lose a message, a timeout's worth of time, or their peer
        disturbed = {p for p, _, _ in params.crashes}
        for side, _, _ in params.partitions:
            # the smaller group is cut off; of two exact halves, the one without party 0
            # (the other may sign a round naming it: `agreement.majority`)
            rest = set(range(n)) - set(side)
            cut = 2 * len(side) < n or (2 * len(side) == n and 0 not in side)
            disturbed |= set(side) if cut else rest
        if params.drop or params.delay[1] > TIMEOUT / 2:
            disturbed |= set(range(n))
        self.answering = [p for p in self.honest if p not in disturbed]
        for p, down, after in self.params.crashes:
            self.at(down, "crash", p)
            self.at(down + after, "boot", p)
        for p, strategy in self.strategies.items():
            for moment in strategy.moments:
                self.at(moment, "act", p)

    # -- the queue ---------------------------------------------------------------------------

    def at(self, when: float, what: str, *args: Any) -> None:
        heapq.heappush(self.queue, _Event(when, next(self._seq), what, args))

    def _heir_identity(self, party: int, length: int) -> Identity:
        """A new identity the host makes for an heir of `party` (as `play.heir` does)."""
        identity = Identity.from_seed(
            bytes([0x48, party]) + length.to_bytes(8, "big") + bytes(22), f"heir{party}"
        )
        self.heir_ids[identity.public.raw] = identity
        return identity

    def clock(self, party: int) -> float:
        """Party `party`'s own clock reading now: its own rate since the schedule began."""
        return self._clock_base[party] + (self.now - self.begin) * self.params.rates[party]

    def start(self) -> None:
        """The honest table's first events: every seat boots and its clock ticks."""
        for p in range(self.n):
            self.at(self.rng.uniform(0.0, 0.01), "boot", p)
            self.at(self.rng.uniform(0.0, TICK), "tick", p)

    def in_flight(self) -> bool:
        """Whether an entry is on its way to somebody."""
        return any(
            ev.what == "deliver" and isinstance(ev.args[2], list) and ev.args[2][:1] == ["e"]
            for ev in self.queue
        )

    def step(self) -> bool:
        """Take the next event; False once nothing is left before the horizon."""
        if not self.queue:
            return False
        ev = heapq.heappop(self.queue)
        if ev.at > self.params.horizon:
            return False
        self.now = ev.at
        self.touched = {ev.args[0]}  # every event is about one party: the first argument
        getattr(self, "_" + ev.what)(*ev.args)
        return True

    # -- events ------------------------------------------------------------------------------

    def _boot(self, p: int) -> None:
        seat = self.seats[p]
        seat.world_now = self.now
        seat.local_now = self.clock(p)
        if seat.up:
            return
        self.trace.append(f"{self.now:.3f} boot {p} ({len(seat.files.log)} saved)")
        self._out(p, seat.boot(self.clock(p)))

    def _crash(self, p: int) -> None:
        self.trace.append(f"{self.now:.3f} crash {p}")
        self.seats[p].crash()

    def _tick(self, p: int) -> None:
        seat = self.seats[p]
        seat.world_now = self.now
        seat.local_now = self.clock(p)
        if seat.up:
            linked = {q for q in range(self.n) if q != p and self.seats[q].up
                      and not self._cut(p, q)}  # fmt: skip
            self._out(p, seat.tick(self.clock(p), linked))
        self.at(self.now + TICK * self.rng.uniform(0.9, 1.1), "tick", p)

    def _act(self, p: int) -> None:
        strategy = self.strategies[p]
        seat = self.retired.get(p, self.seats[p])  # a replaced party keeps its old key
        if not seat.up:
            return
        sends = strategy.act(seat, self.now)
        if strategy.restart is not None:  # it restarts, from the files it chose
            seat.crash()
            seat.files.votes = strategy.restart
            strategy.restart = None
            self.trace.append(f"{self.now:.3f} [{p}] restarts with {len(seat.files.votes)} "
                              "saved voids")  # fmt: skip
            self.at(self.now + 0.05, "boot", p)
        for to, msg, delay in sends:
            self._send(p, to, msg, delay)

    def _deliver(self, to: int, frm: int, msg: Message) -> None:
        seat = self.seats[to]
        seat.world_now = self.now
        seat.local_now = self.clock(to)
        if not seat.up or self._cut(frm, to):
            return
        if seat.heir is not None and not self._admits(frm, seat):
            return  # nobody is linked to an heir before it has seated it
        self._out(to, seat.receive(frm, msg, self.clock(to)))
        self._seat_heirs()

    def _admits(self, frm: int, heir: Seat) -> bool:
        """Whether `frm` has applied the round that seats `heir` (validate before revealing:
        a present party sends an heir nothing before that, docs/protocol.md 4.5)."""
        sender = self.seats[frm].peer
        return sender is not None and sender.table.keys[heir.party].raw == heir.heir

    def _seat_heirs(self) -> None:
        """A "replace" round the host applied names new identities: the host starts them
        (the heir follows the log from the genesis until the round seats it)."""
        host = self.seats[0].peer
        if host is None or not host.table.successions:
            return
        for party in {p for _, p, _ in host.table.successions}:
            key = host.table.keys[party]  # the latest heir in force
            seat = self.seats[party]
            if seat.identity.public.raw == key.raw:
                continue
            identity = self.heir_ids.get(key.raw)
            if identity is None:
                continue
            old = self.seats[party]
            old.crash()
            self.retired[party] = old
            heir = Seat(party, identity, bytes([0x68, party]) * 16, old.files.log[0],
                        void_action=self.params.void_actions[party], timeout=TIMEOUT)  # fmt: skip
            heir.heir = key.raw
            self.seats[party] = heir
            self.touched = None
            if party not in self.honest:
                self.honest.append(party)
                self.honest.sort()
            if party in self.answering:
                self.answering.remove(party)
            self.trace.append(f"{self.now:.3f} heir seated for party {party}")
            self.at(self.now + 0.01, "boot", party)

    # -- links -------------------------------------------------------------------------------

    def _cut(self, a: int, b: int) -> bool:
        if self.now >= self.params.heal:
            return False
        for side, start, end in self.params.partitions:
            if start <= self.now < end and ((a in side) != (b in side)):
                return True
        return False

    def _out(self, p: int, sends: list[tuple[int | None, Message]]) -> None:
        seat = self.seats[p]
        for note in seat.notes:
            self.trace.append(f"{self.now:.3f} [{p}] {note}")
        seat.notes.clear()
        sends = sends + seat.extra
        seat.extra = []
        strategy = seat.strategy
        for to, msg in sends:
            if strategy is None:
                self._send(p, to, msg, 0.0)
                continue
            for to2, msg2, delay in strategy.outgoing(seat, to, msg, self.now):
                self._send(p, to2, msg2, delay)

    def _send(self, p: int, to: int | None, msg: Message, extra: float) -> None:
        """`to`: a party, None for everybody else, -1-a for everybody else but party a."""
        if to is None or to < 0:
            skip = -1 - to if to is not None else -1
            targets = [q for q in range(self.n) if q not in (p, skip)]
        else:
            targets = [to]
        healed = self.now >= self.params.heal
        for q in targets:
            if not healed and self.rng.random() < self.params.drop:
                continue
            copies = 2 if self.rng.random() < self.params.dup else 1
            for _ in range(copies):
                delay = self.rng.uniform(*self.params.delay) + extra
                self.at(self.now + delay, "deliver", q, p, msg)


def honest_params(seats: int, deal: int) -> Params:
    """The honest table a schedule forks: no hostile party, no fault, clocks alike."""
    return Params(
        seed=deal, seats=seats, deal=deal, stage=0, hostile={},
        void_actions=["void"] * seats, drop=0.0, dup=0.0, delay=(0.001, 0.05),
        rates=[1.0] * seats, crashes=[], partitions=[], heal=0.0, horizon=1e9,
    )  # fmt: skip


def honest_table(seats: int, deal: int, *, max_events: int = 2_000_000) -> list[World]:
    """The honest table at `seats` seats with deal `deal`, copied at each of `STAGES`: as far
    into its one-hand match as that share of its log (the last once the log is closed and
    the last entries have reached everybody). Played twice: once to learn the log's length,
    once to copy it (the second time, its proofs are remembered, `sim.memo`)."""

    def play(marks: list[int] | None) -> tuple[int, list[World]]:
        w = World(honest_params(seats, deal))
        w.start()
        copies: list[World] = []
        events = 0
        while w.step():
            events += 1
            if events > max_events:
                raise RuntimeError(f"the honest table at {seats} seats never closed")
            length = min(len(s.peer.log) for s in w.seats if s.peer is not None)
            while marks is not None and len(copies) < len(marks) and length >= marks[len(copies)]:
                copies.append(w.fork(honest_params(seats, deal)))
            if all(s.peer is not None and s.peer.table.closed for s in w.seats):
                break
        if marks is not None:
            for _ in range(200):  # the closed log's last entries reach everybody
                if not w.step():
                    break
            while len(copies) < len(marks):
                copies.append(w.fork(honest_params(seats, deal)))
        return length, copies

    final, _ = play(None)
    marks = [max(1, int(f * final)) for f in STAGES[:-1]] + [final + 1]
    return play(marks)[1]
