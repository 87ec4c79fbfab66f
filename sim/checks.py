"""The properties of docs/protocol.md 4.5-4.6, checked on a run of the simulator.

After every event (`Watch.after_event`), for the honest parties:

- S3, a final entry is never removed, nor even a settled one: each honest peer's settled
  prefix (`Peer.settled`, told by the log's own hash at that length, `Table.chain`) is still
  the start of its log, and of its saved log when it restarts (the final point, `Peer.final`,
  is never past it);
- S1, one match, one log: the final prefixes of two honest peers (the longest each has
  counted) are one a prefix of the other.

At the end of the run (`Watch.at_end`), once the network has healed and the table has had
its timeouts:

- S1 on whole logs: two honest logs are one a prefix of the other (`verify A B` never says
  they fork);
- S2, no honest party that answers is named: no void round in an honest log names one
  (S1 and S2 are not promised where the hostile parties may sign a round alone,
  `Watch.hostile_quorum`);
- S4, an equivocator is named with evidence anyone can check: every equivocation an honest
  peer reported checks (`check_equivocation`) and names a hostile party, never an honest
  one;
- L1, with a majority honest and present, the table moves on or closes: every honest
  peer's log has closed, has reached the final round, applied a void round, or grown past
  where it stood when the network healed;
- L2, nothing crashes an honest peer or `verify`: no exception left a seat (recorded by the
  world), and `verify` audits every honest log with a verdict, fair or unfinished, never a
  bad entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from buraco_p2p.audit import EXIT_FAIR, EXIT_UNFINISHED, verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.session import Fault, Rewrite, bodies, check_equivocation
from buraco_p2p.session.agreement import majority
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.errors import Equivocation
from buraco_p2p.session.states import Phase
from buraco_p2p.session.table import Table
from buraco_p2p.verify_compare import divergence
from sim.world import TIMEOUT, World

__all__ = ["Violation", "Watch"]


class Violation(AssertionError):
    """A property failed: its name and what was seen."""

    def __init__(self, prop: str, what: str) -> None:
        super().__init__(f"{prop}: {what}")
        self.prop = prop


@dataclass
class Watch:
    """What the checks remember between events: each honest peer's settled prefix and its
    final point."""

    world: World
    # by party and the key of the identity in its seat (an heir starts its own record)
    settled: dict[tuple[int, bytes], tuple[int, bytes]] = field(default_factory=dict)
    finals: dict[tuple[int, bytes], int] = field(default_factory=dict)
    healed_at: dict[int, int] = field(default_factory=dict)
    voided: set[int] = field(default_factory=set)
    moved_at: dict[int, float] = field(default_factory=dict)

    @property
    def hostile_quorum(self) -> bool:
        """Whether the hostile parties may sign a void round alone (naming every honest
        party): then S1 and S2 are not promised (docs/protocol.md 4.6, the table of
        hostile counts), and only S3, S4 and L2 are checked."""
        w = self.world
        return bool(w.n - len(w.honest)) and majority(w.n, w.honest)

    def after_event(self) -> None:
        w = self.world
        # a peer changes only when its seat is handed an event (the session is sans-IO): the
        # others' prefixes, and the pairs of them, stand as the last check found them
        touched = set(w.honest) if w.touched is None else w.touched
        for p in w.honest:
            seat = w.seats[p]
            peer = seat.peer
            if peer is None:
                continue
            table = peer.table
            mark = (p, seat.identity.public.raw)  # an heir in a party's place starts its own
            # record (by its key: the id of a retired seat may be given to the next heir's)
            if p in touched:
                s, f = peer.settled, peer.final
                prev = self.settled.get(mark)
                if prev is not None:
                    length, chain = prev
                    if len(table.log) < length or _chain(table, length) != chain:
                        raise Violation("S3", f"party {p} removed settled entries below {length}")
                    if s < length:
                        raise Violation("S3", f"party {p}'s settled point went back "
                                              f"{length} -> {s}")  # fmt: skip
                if s >= 1:
                    self.settled[mark] = (s, _chain(table, s))
                # the furthest final point it counted: the entries before it stay (they are
                # settled), though the point may count lower after a roll-back made while it
                # stands by the void of a dispute (docs/protocol.md 4.6, S3)
                self.finals[mark] = max(f, self.finals.get(mark, 0))
            if w.now >= w.params.heal and p not in self.healed_at:
                self.healed_at[p] = len(table.log)
            if p in self.healed_at and p not in self.moved_at and (
                table.closed or table.phase is Phase.FINAL
                or (len(table.log) > self.healed_at[p] and table.voiding is None)  # a step
            ):  # (review: a void round half applied is no step; it was counted as one)
                self.moved_at[p] = w.now
            if p not in self.voided and peer.table.voids:
                self.voided.add(p)
        if self.hostile_quorum:
            return  # hostile parties that may sign a round alone may close two (4.6's table)
        marks = [(p, (p, w.seats[p].identity.public.raw)) for p in w.honest]
        known = [(p, self.finals[m]) for p, m in marks if m in self.finals]
        for i, (p, fp) in enumerate(known):
            for q, fq in known[i + 1 :]:
                if p not in touched and q not in touched:
                    continue
                k = min(fp, fq)
                a, b = w.seats[p].peer, w.seats[q].peer
                if a is None or b is None:
                    continue
                if _chain(a.table, k) != _chain(b.table, k) and not _apart(w, a.log, b.log):
                    raise Violation("S1", f"the final prefixes of parties {p} and {q} differ "
                                          f"within their first {k} entries")  # fmt: skip

    def at_end(self, *, audit: bool = True) -> None:
        w = self.world
        logs = {p: list(w.seats[p].files.log) for p in w.honest}
        for p in w.honest:
            peer = w.seats[p].peer
            if peer is not None and [e.wire for e in peer.log] != logs[p]:
                raise Violation("S3", f"party {p}'s saved log is not its log")
        if w.errors:
            raise Violation("L2", w.errors[0])
        for i, p in enumerate(w.honest if not self.hostile_quorum else ()):
            for q in w.honest[i + 1 :]:
                d = divergence(logs[p], logs[q])
                pa, pb = w.seats[p].peer, w.seats[q].peer
                if d is not None and d["longer"] is None and not (
                        pa is not None and pb is not None and _apart(w, pa.log, pb.log)):
                    raise Violation("S1", f"the logs of parties {p} and {q} fork at {d['common']}")
        self._named(logs)
        self._evidence()
        self._moved()
        if audit:
            for wires in _maximal(logs):
                v = verify_bytes(encode_log(wires))
                if v.code not in (EXIT_FAIR, EXIT_UNFINISHED):
                    raise Violation("L2", f"verify says {v.code}: {v.doc.get('error')} "
                                          f"{v.doc.get('reason', '')}")  # fmt: skip

    def _named(self, logs: dict[int, list[bytes]]) -> None:
        """S2: no void round in an honest log names a party that was answering."""
        w = self.world
        for p in w.honest if not self.hostile_quorum else ():
            peer = w.seats[p].peer
            if peer is None:
                continue
            for rec in peer.table.voids:
                bad = set(rec.silent) & set(w.answering)
                if bad:
                    raise Violation("S2", f"party {p}'s log names answering party "
                                          f"{sorted(bad)} in a void at {rec.index}")  # fmt: skip

    def _evidence(self) -> None:
        """S4: every equivocation reported names a hostile party, and checks."""
        w = self.world
        for p in w.honest:
            seat = w.seats[p]
            genesis = seat.files.log[0]
            for ev in seat.all_events:
                if not isinstance(ev, Fault | Rewrite) or not isinstance(ev.error, Equivocation):
                    continue
                err = ev.error
                first, second = err.evidence
                peer = seat.peer
                key = (peer.table.key_at(err.author, err.index or 0)
                       if peer is not None and err.author is not None else None)
                # a hostile party's seat may have passed to an honest heir since: evidence
                # under the retired key names the hostile identity, not the heir
                retired = err.author in w.params.hostile and key is not None and \
                    key != w.seats[err.author].identity.public
                if err.author in w.honest and not retired:
                    raise Violation("S4", f"party {p} names honest party {err.author}")
                if check_equivocation(genesis, first, second, key) != err.author:
                    raise Violation("S4", f"party {p}'s evidence does not check")

    def _moved(self) -> None:
        """L1: with a majority honest and answering, each honest peer's table moved on."""
        w = self.world
        silent = [p for p in range(w.n) if p not in w.answering]
        if not majority(w.n, silent):
            return
        bound = l1_bound(w.n)
        for p in w.answering:
            peer = w.seats[p].peer
            if peer is None:
                continue
            t = peer.table
            moved = self.moved_at.get(p)
            if moved is not None and moved - w.params.heal <= bound:
                continue
            raise Violation("L1", f"party {p}'s table stands at {len(t.log)} ({t.phase.value}, "
                                  f"waiting for {list(t.waiting_for)}) more than {bound:.1f} s "
                                  "after the network healed")  # fmt: skip


def _apart(w: World, a: Sequence[Entry], b: Sequence[Entry]) -> bool:
    """Whether two logs part at void rounds whose quorums meet in hostile parties only:
    a hostile party that signed with two groups of honest parties that could not reach each
    other (4.6, "Its limit": no rule can keep such groups together, and S1 is not promised)."""
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if start is None:
        return False
    signers = [{e.author for e in log[start:] if e.kind == bodies.VOID} for log in (a, b)]
    common = signers[0] & signers[1]
    return bool(signers[0] and signers[1]) and common <= set(range(w.n)) - set(w.honest)


def _chain(table: Table, length: int) -> bytes:
    return table.chain_at(length)


def _maximal(logs: dict[int, list[bytes]]) -> list[list[bytes]]:
    """The logs that are no prefix of another (one, when they are one log)."""
    out: list[list[bytes]] = []
    for wires in sorted(logs.values(), key=len, reverse=True):
        if not any(o[: len(wires)] == wires for o in out):
            out.append(wires)
    return out


def l1_bound(n: int) -> float:
    """L1's bound, in seconds of the simulator: a timeout for the silent parties, twice one
    for each try a present party that never signs can cost, half a timeout for each proposer
    before the one that proposes, and a timeout of slack for ticks and message delays."""
    return TIMEOUT * (1 + 2 * (n - 1) + 0.5 * (n - 1) + 1)
