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
    from buraco_p2p.session.table import Table
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

    def _round(self, seat: Seat) -> tuple[Table, Entry, int, list[int]] | None:
        """The latest void round in our log: our table, that round's last entry, its point
        and its silent parties; None if there is none (or no table)."""
        peer = seat.peer
        if peer is None or peer.table.closed:
            return None
        t = peer.table
        for e in reversed(t.log):
            if e.kind == bodies.VOID:
                break
        else:
            return None
        silent = list(e.body.get("silent", ()))
        active = [q for q in range(self.n) if q not in silent]
        return t, e, e.index - active.index(e.author), silent

    def act(self, seat: Seat, now: float) -> list[Any]:
        found = self._round(seat)
        if found is None:
            return []
        t, e, point, silent = found
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


class HoldClaim(Strategy):
    """Two roles by party number. The last party (N-1) is a *holder*: it makes its entries
    as an honest party does but never lets a void of its own out, and once the others sign
    a void round at its point (naming a party gone silent) it tells ONE honest party (not
    party 0), and only that one, again and again, that it is catching up (claims of the log
    that count, 4.5). Every other hostile party goes silent from a moment on (it is the party
    the round names). Were the claimed-to party to leave the holder out of its retry for the
    claims, the others' retry naming the holder would wait for it, and their next one name
    it, present and answering (4.5 R2: a claim keeps no party out of `Q`)."""

    name = "holdclaim"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.holder = me == parties - 1
        self.after = rng.uniform(0.0, 3.0) if not self.holder else 0.0
        self.moments = [0.1 * k for k in range(1, 400)] if self.holder else []
        self.begun: float | None = None  # when we saw the others' round at our point
        self.point = -1
        self.target: int | None = None
        self.claim = 0
        self.last = -1.0  # when we last claimed

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if not self.holder:
            return [] if now >= self.after else [(to, msg, 0.0)]
        if msg[0] == "e":
            e = decode_entry(msg[1])
            if e.author == self.me and e.kind == bodies.VOID:
                return []  # our votes reach nobody: we hold every round
        elif msg[0] in ("at", "sync"):
            return []  # we claim only what we choose to (`act`)
        return [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if not self.holder or peer is None or peer.table.closed:
            return []
        t = peer.table
        length = len(t.log)
        if self.point < 0:
            if peer.proposal is None:  # no void of the others at our point yet
                return []
            self.point = length
            self.begun = now
            waiting = set(t.waiting_for)
            cands = [p for p in range(self.n) if p not in (0, self.me) and p not in waiting]
            self.target = cands[-1] if cands else None
            seat.notes.append(f"holdclaim: round at {length}, claims to {self.target}")
        if self.target is None or self.begun is None:
            return []
        if now - self.begun < 1.15 * seat.timeout or now - self.last < 0.94 * seat.timeout:
            return []
        mine = [e.index for e in t.log[: self.point] if e.author == self.me]
        # past our latest entry (and our own `at`/`sync` never leave us, `outgoing`)
        claim = max(self.claim + 1, (max(mine) if mine else 0) + 1)
        if claim >= self.point:
            seat.notes.append("holdclaim: out of claims")
            return []
        self.claim, self.last = claim, now
        seat.notes.append(f"holdclaim: at {claim} to {self.target}")
        return [(self.target, ["at", claim], 0.0)]


class Decoy(Stand):
    """Silent from a moment on. Once a void round in its log names it (and the table goes
    on), it signs a retry of its own at that round's point, of a higher try: a vote that
    stands behind the others' logs (4.5 R3), and sends it at once to ONE honest party
    (`frame`: not party 0), before that party's timeout of the next step. To the others it
    sends, at the same moment, two other votes of its own for the very index and try of that
    vote, each with another `p` and naming every party before it (so their point is that
    index, where no round of the log stands), to take the places a peer keeps for that
    author's voids. The framed party counts the silent party answering for 4 timeouts, and
    so must the others once the vote reaches them relayed: a peer that did not keep it would
    retry naming the framed party, present and answering, which has not signed (4.6, "What a
    peer keeps for it": slots by point, votes on its own log)."""

    name = "decoy"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = [self.after + 0.05 * k for k in range(400)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        found = self._round(seat)
        if found is None or self.me not in found[3]:
            return []
        t, e, point, _ = found
        if point < t.cover[self.me] or point in self.stood:
            # an old entry again, now and then: a duplicate the others drop (it keeps the
            # simulator's run going while the step plays out: `schedule._done`)
            return [(q, ["e", t.log[0].wire], 0.2) for q in self.others] if self.stood else []
        self.stood.add(point)
        frame = next(q for q in self.others if q != 0)
        named = [frame]
        attempt = bodies.void_try(e.body) + 1
        body = {"action": "end", "silent": named, bodies.TRY: attempt}
        v = self.void_at(seat, point, body)
        if v is None:
            return []
        sends: list[Any] = [(frame, ["e", v.wire], 0.0)]
        below = list(range(self.me))  # naming every party before us puts our vote first:
        # the same index is then the vote of a later point, which no round in the log is at
        if not below or v.index == point:
            return sends
        for k in range(2):
            fake = make_entry(seat.identity, table=v.table, index=v.index,
                              prev=bytes([k + 1]) * 32, author=self.me, kind=bodies.VOID,
                              body={"action": "end", "silent": below, bodies.TRY: attempt})
            sends += [(q, ["e", fake.wire], 0.0) for q in self.others if q != frame]
        seat.notes.append(f"decoy: vote at {point} try {attempt} to {frame}; two votes at "
                          f"{v.index} (point {v.index}) to the rest")
        return sends


class BadPrev(Strategy):
    """Two roles by party number. The last party (N-1) plays and votes as an honest party
    does, but every void of its own leaves it re-signed with another `p` (its motion and
    index unchanged). Were such a vote counted in a round, a peer would apply the round's
    entries before it and then refuse it, and stand half way through the round for good; it
    completes no round (4.5 rule 1: a round's votes name one `p`, the log's), and the retry
    names its author. Every other hostile party goes silent from a moment on (the party the
    round names)."""

    name = "badprev"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.voter = me == parties - 1
        self.after = rng.uniform(0.0, 3.0) if not self.voter else 0.0
        self.keepalive = [0.5 * k for k in range(1, 60)] if self.voter else []
        self.moments = self.keepalive

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if not self.voter:
            return [] if now >= self.after else [(to, msg, 0.0)]
        if msg[0] == "e":
            e = decode_entry(msg[1])
            if e.author == self.me and e.kind == bodies.VOID and not bodies.is_decline(e.body):
                bad = make_entry(seat.identity, table=e.table, index=e.index,
                                 prev=bytes([0xBD]) * 32, author=e.author, kind=e.kind,
                                 body=dict(e.body))  # fmt: skip
                seat.notes.append(f"badprev: our void at {e.index} sent with another p")
                return [(to, ["e", bad.wire], 0.0)]
        return [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None or not peer.table.log:
            return []
        # an old entry again now and then (a duplicate the others drop): it keeps the
        # simulator's run going (`schedule._done`), so what the honest tables do is seen
        return [(q, ["e", peer.table.log[0].wire], 0.2) for q in self.others]


class FloodEquivocate(Strategy):
    """First sends every peer hundreds of voids of its own at points from its latest entry on
    (two per index and try, each with its own `p`: no equivocation), to fill the store a
    peer keeps of voids behind its log, then signs a second entry for its latest index and
    sends it to some of the others: a dispute (4.6 rule 3), whose votes the honest peers
    must still keep and find."""

    name = "floodequiv"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = [rng.uniform(0.5, 3.0)]
        self.done = False

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        if self.done and msg[0] == "e" and decode_entry(msg[1]).author == self.me:
            return []  # silent from then on: our entry there stays unsettled
        return [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None or self.done or peer.table.closed:
            return []
        t = peer.table
        mine = [e for e in t.log[1:] if e.author == self.me]
        if not mine:
            return []
        e = mine[-1]
        self.done = True
        sends: list[Any] = []
        count = 0
        first = max(e.index, peer.settled)
        for index in range(first + 1, len(t.log) + 60):
            for attempt in range(self.n):
                for k in range(2):
                    body: dict[str, Any] = {"action": "end" if attempt else "void",
                                            "silent": [q for q in self.others][:1]}
                    if attempt:
                        body[bodies.TRY] = attempt
                    v = make_entry(seat.identity, table=t.terms.table_id, index=index,
                                   prev=bytes([k, attempt]) + index.to_bytes(4, "big") * 7
                                   + bytes(2), author=self.me, kind=bodies.VOID, body=body)
                    sends += [(q, ["e", v.wire], 0.0) for q in self.others]
                    count += 1
        other = self.variant(seat, e)
        sends += [(q, ["e", other.wire], 0.12 * seat.timeout) for q in self.subset()]
        seat.notes.append(f"floodequiv: {count} voids, then a second entry at {e.index}")
        return sends


class Crowd(Strategy):
    """Sends one honest peer a few hundred signed voids of its own for points ahead of that
    peer's log (tries past 0: no proposal), which that peer relays to the others, to crowd
    every honest peer's store of voids; then, at once, a second entry for its own latest
    index (an equivocation the honest parties dispute, 4.6 rule 3), whose votes every honest
    peer must still keep and find (4.6, "What a peer keeps for it")."""

    name = "crowd"

    def __init__(self, rng: random.Random, parties: int, me: int) -> None:
        super().__init__(rng, parties, me)
        self.moments = sorted(rng.uniform(0.5, 8.0) for _ in range(rng.randrange(2, 6)))

    def outgoing(self, seat: Seat, to: int | None, msg: Message, now: float) -> list[Any]:
        """It signs no round: its own voids (votes and declines) reach nobody, so no round
        that names an honest party has a hostile signer."""
        if msg[0] == "e":
            e = decode_entry(msg[1])
            if e.kind == bodies.VOID and e.author == self.me:
                return []
        return [(to, msg, 0.0)]

    def act(self, seat: Seat, now: float) -> list[Any]:
        peer = seat.peer
        if peer is None or peer.table.closed:
            return []
        t = peer.table
        target = self.rng.choice(self.others)
        others = list(self.others)
        sends: list[Any] = []
        length = len(t.log)
        for i in range(length + 2, length + 60):
            for attempt in range(1, self.n):
                for k in range(2):
                    silent = sorted({others[(i + k) % len(others)]})
                    if k and len(others) > 1:
                        silent = sorted({others[(i + k) % len(others)], others[i % len(others)]})
                    body = {"action": "end", "silent": silent, bodies.TRY: attempt}
                    v = make_entry(seat.identity, table=t.terms.table_id, index=i,
                                   prev=bytes(32), author=self.me, kind=bodies.VOID, body=body)
                    sends.append((target, ["e", v.wire], 0.0))
        mine = [e for e in t.log[1:] if e.author == self.me and e.kind != bodies.VOID]
        if mine:
            other = self.variant(seat, mine[-1])
            sends += [(q, ["e", other.wire], 0.05 * seat.timeout) for q in self.others]
        return sends


STRATEGIES: dict[str, type[Strategy]] = {
    s.name: s
    for s in (Equivocate, Split, Withhold, Lone, Late, Stale, Claims, Garbage, Retired, OldVotes,
              Release, Aside, Stand, HoldClaim, Decoy, BadPrev, FloodEquivocate, Crowd)
}
# what a schedule draws at random: a strategy added later is run by name only, so that every
# kept seed still draws the schedule it was kept for
DRAWN = ("equivocate", "split", "withhold", "lone", "late", "stale", "claims", "garbage",
         "retired", "oldvotes")  # fmt: skip


def make_strategy(name: str, rng: random.Random, parties: int, me: int) -> Strategy:
    return STRATEGIES[name](rng, parties, me)
