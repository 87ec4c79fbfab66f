"""The hostile parties' strategies: what a party that wants to rewrite, fork, freeze or frame
the table can send.

A hostile party runs an honest `Seat` underneath (it plays, signs and relays as a client
does, so it is present and answering), and its strategy changes what leaves it
(`outgoing`) and adds what it sends on its own at moments drawn from the schedule's seed
(`act`). Every strategy uses only what such a party really has: its own identity key (and,
once replaced, its retired one), the entries it has seen, and its own clock. The library:

- `equivocate`: a second, different entry signed for one of its own indices, old or
  current, in a closed log too, sent to some of the others;
- `split`: on its turn, two different legal moves for one index, one to some parties and
  one to the rest (the peers that hold each may both go on from it);
- `withhold`: its entries of one kind, or its voids, reach nobody (or only some);
- `lone`: voids it signs alone, naming others (the honest among them) at the current point,
  of every try, a different one to each party;
- `late`: its voids held back and sent between the honest parties' clocks;
- `stale`: old messages it heard (proposals, voids, entries) sent again much later;
- `claims`: false `sync` and `at` claims of the log it holds;
- `retired`: it walks out, and once its seat has passed to a new identity it signs second
  entries for its old indices with its retired key;
- `oldvotes`: it restarts from an older copy of its voids file (and signs again);
- `garbage`: bytes that are no entry, entries of no schema, messages of no shape;
- `release`: it joins every void proposed at its point at once, whoever it names, and
  declines it to everybody (the signers, released, go on with the entries there); it keeps
  its own entries past that point from some of the others, and sends those others its vote
  once its own log counts the point settled: a round completed with votes its signers gave
  up, by a party that both declined and voted;
- `aside`: from a moment on, its entries reach nobody, and it tells only some of the others,
  again and again, that it is catching up (claims of the log that count, 4.5): to those it
  keeps answering while the rest see it keep the table waiting, so the two groups' clocks
  disagree on whom a void may name.

- `stand`: from a moment on, its entries reach nobody, and once a void round in the
  others' logs names it, it signs a retry of its own at that round's point and sends it
  about a timeout into the next step: a vote that stands behind their logs (4.5 R3), which
  clocks that run at different rates note some before and some after their timeout.

`release`, `aside` and `stand` are not among the strategies a schedule draws at random
(adding one there would change what every kept seed draws): `python -m sim --hostile aside`
runs one.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from buraco_p2p.engine import IllegalMove, Move, legal_moves
from buraco_p2p.session import bodies, decode_entry, make_entry
from buraco_p2p.session.entry import Entry

if TYPE_CHECKING:
    from sim.seat import Message, Seat

__all__ = ["DRAWN", "STRATEGIES", "Strategy", "make_strategy"]

Send = tuple[int | None, "Message"]


class Strategy:
    """What a hostile party does besides playing: base class (a party that only plays)."""

    name = "none"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        self.rng = rng
        self.n = parties
        self.me = me
        self.others = [p for p in range(parties) if p != me]
        # moments (virtual seconds from the schedule's start) at which `act` is called, and
        # from when `outgoing` changes anything
        self.moments: list[float] = []
        self.after = 0.0
        # voids a party restarts with (`oldvotes`): the world restarts it from them
        self.restart: list[bytes] | None = None

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        """What leaves us instead of `msg` for `to`: (to, msg, extra delay) triples."""
        return [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        """What we send on our own at one of our moments."""
        return []

    def moving(self, seat: Seat, move: Move, now: float) -> list[Any]:
        """What we send on our own as we are about to play `move`: (to, msg) pairs."""
        return []

    # -- helpers ----------------------------------------------------------------------------

    def subset(self) -> list[int]:
        """A random non-empty proper part of the others (all of them at two seats)."""
        if len(self.others) == 1:
            return list(self.others)
        k = self.rng.randrange(1, len(self.others))
        return self.rng.sample(self.others, k)

    def void_at(self, seat: Seat, point: int, body: dict[str, Any]) -> Entry | None:
        """Our void entry of `body` for the round at `point` of our log (its index our place
        among the parties it does not name); None where our log has no such point."""
        assert seat.peer is not None
        t = seat.peer.table
        try:
            prev = t.prev_at(point)
        except ValueError:
            return None
        active = [p for p in range(self.n) if p not in body["silent"]]
        index = point + active.index(self.me)
        return make_entry(seat.identity, table=t.terms.table_id, index=index, prev=prev,
                          author=self.me, kind=bodies.VOID, body=body)  # fmt: skip

    def variant(self, seat: Seat, e: Entry) -> Entry:
        """Another entry signed by us for `e`'s index, `p` and kind: its body changed."""
        body = dict(e.body)
        if e.kind == bodies.VOID:
            body["action"] = "end" if body.get("action") != "end" else "void"
            body.pop("keys", None)
            if body["action"] != "end":
                body.pop(bodies.TRY, None)
        elif e.kind == bodies.MOVE or self.rng.random() < 0.5:
            body["x"] = self.rng.randrange(1 << 30)  # off its schema: evidence all the same
        else:
            key = self.rng.choice(sorted(body))
            value = body[key]
            body[key] = value[:-1] + bytes([value[-1] ^ 1]) if isinstance(value, bytes) and value \
                else self.rng.randrange(1 << 30)  # fmt: skip
        return make_entry(seat.identity, table=e.table, index=e.index, prev=e.prev,
                          author=e.author, kind=e.kind, body=body)  # fmt: skip


class Equivocate(Strategy):
    """A second entry for one of its own indices: an old one, the latest, in a closed log."""

    name = "equivocate"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(0.0, 6.0) for _ in range(rng.randrange(1, 4)))

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None:
            return []
        mine = [e for e in peer.log[1:] if e.author == self.me]
        if not mine:
            return []
        e = mine[-1] if self.rng.random() < 0.4 else self.rng.choice(mine)
        other = self.variant(seat, e)
        return [(p, ["e", other.wire], 0.0) for p in self.subset()]


class Split(Strategy):
    """On its turn, two different legal moves signed for one index: one to some parties and
    the other to the rest (elsewhere, its next entry in two versions)."""

    name = "split"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.after = rng.uniform(0.0, 4.0)
        self.done = False
        self.part = self.subset()
        self.hold: bytes | None = None  # the wire of the move whose other version we sent

    def moving(self, seat: Seat, move: Move, now: float) -> list[Any]:
        """Before its move is played: sign another legal move for the same index, to be sent
        to one part of the table (the move it plays goes to the other)."""
        peer = seat.peer
        if self.done or now < self.after or peer is None or peer.table.view is None:
            return []
        others = [m for m in legal_moves(peer.table.view) if m != move]
        if not others:
            return []
        alt = self.rng.choice(others)
        try:
            index, body = peer.table.move_body(alt)
        except IllegalMove:
            return []
        self.done = True
        e = make_entry(seat.identity, table=peer.table.terms.table_id, index=index,
                       prev=peer.table.step_prev, author=self.me, kind=bodies.MOVE,
                       body=body)  # fmt: skip
        self.hold = index.to_bytes(8, "big")
        return [(p, ["e", e.wire]) for p in self.part]

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if self.hold is not None and msg[0] == "e":
            e = decode_entry(msg[1])
            if e.author == self.me and e.index.to_bytes(8, "big") == self.hold:
                targets = self.others if to is None else [to]
                return [(p, msg, 0.0) for p in targets if p not in self.part]
        return [(to, msg, 0.0)]


class Withhold(Strategy):
    """Its entries of one kind (or its voids) reach nobody, or only some."""

    name = "withhold"
    KINDS = ("void", "deal", "shares", "end", "result", "open", "final", "keys", "move")

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.kind = rng.choice(self.KINDS)
        self.reach = self.subset() if rng.random() < 0.5 else []
        self.after = rng.uniform(0.0, 5.0)

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if now < self.after or msg[0] != "e":
            return [(to, msg, 0.0)]
        e = decode_entry(msg[1])
        if e.kind != self.kind or e.author != self.me:
            return [(to, msg, 0.0)]
        targets = self.others if to is None else [to]
        return [(p, msg, 0.0) for p in targets if p in self.reach]


class Lone(Strategy):
    """Voids it signs alone at the current point, naming others, of every try."""

    name = "lone"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(0.5, 8.0) for _ in range(rng.randrange(1, 5)))

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None:
            return []
        t = peer.table
        sends = []
        for target in self.others:
            k = self.rng.randrange(1, self.n)
            silent = sorted(self.rng.sample(self.others, min(k, self.n - 1)))
            attempt = self.rng.randrange(self.n)
            action = "end" if attempt else self.rng.choice(["void", "end"])
            body: dict[str, Any] = {"action": action, "silent": silent}
            if attempt:
                body[bodies.TRY] = attempt
            point = len(t.log) - self.rng.randrange(0, 3)
            v = self.void_at(seat, max(1, min(point, len(t.log))), body)
            if v is not None:
                sends.append((target, ["e", v.wire], 0.0))
        return sends


class Late(Strategy):
    """Its voids held back, then sent to some between the others' clocks."""

    name = "late"

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if msg[0] != "e" or decode_entry(msg[1]).kind != bodies.VOID:
            return [(to, msg, 0.0)]
        targets = self.others if to is None else [to]
        out = []
        for p in targets:
            if self.rng.random() < 0.7:
                out.append((p, msg, self.rng.uniform(0.5, 2.6) * seat.timeout))
        return out


class Stale(Strategy):
    """Old messages it heard, sent again much later."""

    name = "stale"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(1.0, 9.0) for _ in range(rng.randrange(2, 8)))
        self.heard: list[bytes] = []

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if msg[0] == "e" and len(self.heard) < 4000:
            self.heard.append(msg[1])
        return [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        if not self.heard:
            return []
        voids = [w for w in self.heard if decode_entry(w).kind == bodies.VOID]
        pool = voids if voids and self.rng.random() < 0.7 else self.heard
        picks = [self.rng.choice(pool) for _ in range(self.rng.randrange(1, 6))]
        return [(self.rng.choice(self.others), ["e", w], 0.0) for w in picks]


class Claims(Strategy):
    """False claims of the log it holds."""

    name = "claims"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(0.0, 9.0) for _ in range(rng.randrange(3, 12)))

    def act(self, seat: Seat, now: float) -> list[Any]:
        n = len(seat.peer.log) if seat.peer is not None else 0
        value = self.rng.choice([0, 1, n, n - 1, n + 1, n + 1000, 1 << 40])
        return [(p, [self.rng.choice(["at", "sync"]), max(0, value)], 0.0) for p in self.others]


class Garbage(Strategy):
    """Bytes that are no entry, entries of no schema, messages of no shape."""

    name = "garbage"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(0.0, 9.0) for _ in range(rng.randrange(2, 10)))

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        r = self.rng
        shapes: list[Any] = [
            ["e", r.randbytes(r.randrange(0, 200))],
            ["e", [1, 2]],
            [["e"], {"a": 1}],
            {"e": 1},
            ["sync", -5],
            ["at", "x"],
            [None, None],
            [],
        ]
        if peer is not None and len(peer.log) > 1:
            e = r.choice(peer.log[1:])
            body = {str(r.randrange(9)): [r.randrange(3)]}
            bad = make_entry(seat.identity, table=e.table, index=len(peer.log),
                             prev=peer.table.step_prev, author=self.me,
                             kind=r.choice([*bodies.KINDS, "nope"]), body=body)  # fmt: skip
            shapes.append(["e", bad.wire])
            wire = bytearray(e.wire)
            wire[r.randrange(len(wire))] ^= 1 << r.randrange(8)
            shapes.append(["e", bytes(wire)])
        return [(r.choice(self.others), r.choice(shapes), 0.0) for _ in range(r.randrange(1, 5))]


class Retired(Strategy):
    """It walks out (sends nothing more); once the host has passed its seat to a new
    identity, it signs with its retired key second entries for indices it authored."""

    name = "retired"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.after = rng.uniform(0.0, 1.5)
        self.moments = sorted(rng.uniform(6.0, 14.0) for _ in range(rng.randrange(1, 4)))

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        return [] if now >= self.after else [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        log = seat.files.log
        mine = [decode_entry(w) for w in log[1:]]
        mine = [e for e in mine if e.author == self.me]
        if not mine:
            return []
        e = mine[-1] if self.rng.random() < 0.5 else self.rng.choice(mine)
        other = self.variant(seat, e)
        return [(p, ["e", other.wire], 0.0) for p in self.others]


class OldVotes(Strategy):
    """It restarts from an older copy of its voids file, and signs again."""

    name = "oldvotes"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(0.5, 9.0) for _ in range(rng.randrange(2, 5)))
        self.saved: list[bytes] | None = None

    def act(self, seat: Seat, now: float) -> list[Any]:
        if self.saved is None or self.rng.random() < 0.3:
            self.saved = list(seat.files.votes)
        else:
            self.restart = self.saved[: self.rng.randrange(len(self.saved) + 1)]
        return []


class Release(Strategy):
    """Every void proposed at its point joined at once, and held back: its own entries past
    that point never reach some of the others (they hear them relayed), and once its own log
    counts the point settled, its vote goes to those others only."""

    name = "release"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = [0.05 * k for k in range(1, 300)]
        self.held: dict[int, tuple[bytes, list[int]]] = {}  # point -> (our vote, its targets)

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        targets = self.others if to is None else [to]
        if msg[0] != "e" or not self.held:
            return [(to, msg, 0.0)]
        e = decode_entry(msg[1])
        if e.author != self.me:
            return [(to, msg, 0.0)]
        kept = {q for point, (_, ts) in self.held.items() if e.index > point for q in ts}
        return [(q, msg, 0.0) for q in targets if q not in kept]

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None or peer.table.closed:
            return []
        t = peer.table
        length = len(t.log)
        sends: list[Any] = []
        for point in [q for q, (wire, _) in self.held.items() if q < peer.settled]:
            wire, targets = self.held.pop(point)
            sends += [(q, ["e", wire], 0.0) for q in targets]
        prop = peer.proposal
        if prop is None or length in self.held:
            return sends
        motion, _ = prop
        if self.me in motion.silent:
            return sends
        body: dict[str, Any] = {"action": motion.action, "silent": list(motion.silent)}
        if motion.keys:
            body["keys"] = list(motion.keys)
        vote = self.void_at(seat, length, body)
        if vote is None:
            return sends
        self.held[length] = (vote.wire, self.subset())
        decline = {**body, "action": bodies.DECLINE}
        decline.pop("keys", None)
        answer = make_entry(seat.identity, table=vote.table, index=vote.index, prev=vote.hash,
                            author=self.me, kind=bodies.VOID, body=decline)  # fmt: skip
        return [*sends, *((q, ["e", answer.wire], 0.0) for q in self.others)]


class Aside(Strategy):
    """Silent to all, but catching up (by its claims) to some: a party the table waits for
    that some honest clocks count as answering and the others as gone."""

    name = "aside"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.after = rng.uniform(0.0, 3.0)
        self.part = self.subset()
        self.moments = [self.after + 0.9 * k for k in range(12)]
        self.latest = 0  # the index of our latest entry the others were sent
        self.claim = 0  # the position we claimed last

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if msg[0] != "e":
            return [(to, msg, 0.0)]
        e = decode_entry(msg[1])
        if e.author != self.me:
            return [(to, msg, 0.0)]
        if now < self.after:
            self.latest = max(self.latest, e.index)
            return [(to, msg, 0.0)]
        return []

    def act(self, seat: Seat, now: float) -> list[Any]:
        # a claim counts once, past our latest entry the others hold and behind their log
        self.claim = max(self.claim + 1, self.latest + 1)
        return [(p, ["at", self.claim], 0.0) for p in self.part]


class Stand(Strategy):
    """Silent from a moment on, and whenever a void round at or after its latest entry is
    in its log (the round that named it, say), a retry of its own at that round's point,
    of a higher try: a vote that stands behind the others' logs (4.5 R3). It sends it about
    a timeout into the step that waits for it, so that honest clocks that run at different
    rates note it, some before their timeout of that step and some after: the first do not
    count it late, and the others sign a void naming it that the first do not join."""

    name = "stand"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.after = rng.uniform(0.0, 3.0)
        self.moments = [self.after + 0.1 * k for k in range(120)]
        self.stood: set[int] = set()  # the points we signed a retry at

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if now < self.after or msg[0] != "e" or decode_entry(msg[1]).author != self.me:
            return [(to, msg, 0.0)]
        return []

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None or peer.table.closed:
            return []
        t = peer.table
        for e in reversed(t.log):
            if e.kind == bodies.VOID:
                break
        else:
            return []
        silent = list(e.body.get("silent", ()))
        active = [q for q in range(self.n) if q not in silent]
        point = e.index - active.index(e.author)
        if point < t.cover[self.me] or point in self.stood:
            return []
        self.stood.add(point)
        named = sorted(set(silent) - {self.me}) or [self.rng.choice(self.others)]
        body = {"action": "end", "silent": named, bodies.TRY: bodies.void_try(e.body) + 1}
        v = self.void_at(seat, point, body)
        if v is None:
            return []
        wait = self.rng.uniform(0.7, 1.3) * seat.timeout
        return [(q, ["e", v.wire], wait) for q in self.others]


STRATEGIES: dict[str, type[Strategy]] = {
    s.name: s
    for s in (Equivocate, Split, Withhold, Lone, Late, Stale, Claims, Garbage, Retired, OldVotes,
              Release, Aside, Stand)
}
# what a schedule draws at random: a strategy added later is run by name only, so that every
# kept seed still draws the schedule it was kept for
DRAWN = ("equivocate", "split", "withhold", "lone", "late", "stale", "claims", "garbage",
         "retired", "oldvotes")  # fmt: skip


def make_strategy(name: str, rng: random.Random, parties: int, me: int) -> Strategy:
    return STRATEGIES[name](rng, parties, me)
