"""One simulated client: the real `Peer`, the real agreement `Policy`, a bot, and its files.

A `Seat` does what the network driver (`buraco_p2p.play.driver`) does around a peer, minus
the sockets: every output is saved before anything of it is sent (the log appended, cut back
first on a roll-back, the void entries replaced), entries first heard are relayed to every
other party but their author, `sync` is answered with `sync_answer`, `at` tells how far the
log has grown, a stale log asks everybody for `sync`, and a bot plays our turns with a random
source drawn from our secret and the log length. A crash loses everything but the files
(`SavedFiles`); `boot` rebuilds the peer from them with `resume`, as `buraco-p2p resume`
does, and the randomness is keyed to the log as the driver keys it, so a restarted seat makes
its own entries again byte for byte.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from buraco_p2p.bots import make_bot
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.play.keyed import LogKeyedRandom
from buraco_p2p.session import Output, Peer, decode_entry
from buraco_p2p.session.events import Event, Refused
from buraco_p2p.session.policy import Policy
from buraco_p2p.session.resume import Tails, resume, sync_answer

__all__ = ["Message", "SavedFiles", "Seat", "Stalled"]

# A stale log asks for `sync` this often, in parts of the timeout (the driver: each second,
# against a timeout of two minutes).
RESYNC = 8

# Refusals in a row, and nothing else, after which a busy peer counts as stalled: far more
# than the entries and votes an honest peer holds at once.
MAX_REFUSALS = 1_000


class Stalled(RuntimeError):
    """A peer said it had work (`Peer.busy`) and did nothing, again and again: a client
    that loops on `busy` would hang there (L1)."""


# The events a trace tells.
NOTED = frozenset({"Voided", "Fault", "Rewrite", "TimedOut", "VoidHeld", "VoidProposed",
                   "MatchEnded", "Abandoned"})  # fmt: skip


def _said(ev: Any) -> str:
    err = getattr(ev, "error", None)
    if err is not None:
        return f"{type(ev).__name__}: {err}"
    return repr(ev)

# A message on a link: ("e", wire), ("sync", n), ("at", n), or anything a hostile party sends.
Message = Any


@dataclass
class SavedFiles:
    """What a client keeps on disk: its log and the void entries it stands by."""

    log: list[bytes] = field(default_factory=list)
    votes: list[bytes] = field(default_factory=list)

    def save(self, out: Output) -> None:
        """As the driver saves an output, before anything of it is sent."""
        if out.rollback is not None:
            del self.log[out.rollback :]
        fresh = [e.wire for e in out.persist if e.index >= len(self.log)]
        self.log += fresh
        if out.votes is not None:
            self.votes = list(out.votes)


class Seat:
    """A client at the table: party `party`, its identity and secret, its files."""

    def __init__(
        self,
        party: int,
        identity: Identity,
        secret: bytes,
        genesis: bytes,
        *,
        void_action: str,
        timeout: float,
        bot: str = "heuristic",
    ) -> None:
        self.party = party
        self.identity = identity
        self.secret = secret
        self.files = SavedFiles(log=[genesis])
        self.void_action = void_action
        self.timeout = timeout
        self.bot = make_bot(bot)
        self.peer: Peer | None = None
        self.policy = Policy(void_action, agree_any=True)
        self.pending: dict[int, bytes] = {}
        self.events: list[Event] = []  # since the last boot
        self.all_events: list[Event] = []
        self.grew_at = 0.0
        self.told = 0
        self.told_at = 0.0
        self.claims: dict[int, int] = {}
        self.tails = Tails(timeout)
        self.filed: set[bytes] = set()
        self._replacer: Callable[[tuple[int, ...]], str] | None = None
        # A hostile party's hook, told each move it is about to play (`Strategy.moving`):
        # what it returns is sent on its own (a second version of the move, say).
        self.moving: Any = None
        self.extra: list[tuple[int | None, Message]] = []
        self.world_now = 0.0  # the simulator's time, for a hostile party's hook
        self.notes: list[str] = []  # what the trace tells of this seat
        self.local_now = 0.0  # our own clock, as last read by the world
        self.strategy: Any = None  # a hostile party's (`sim.hostile`)
        self.heir: bytes | None = None  # an heir's key, until its round seats it

    # -- life ------------------------------------------------------------------------------

    def boot(self, now: float) -> list[tuple[int | None, Message]]:
        """Build the peer from the saved files (a start, or a restart after a crash) and
        ask everybody for what it lacks."""
        rng = LogKeyedRandom(self.secret)

        def bind(peer: Peer) -> None:
            self.peer = peer
            # a method of the seat, not a closure over the peer: a copy of the table
            # (`World.fork`) keys its draws to its own peer's log
            rng.position = self.draw_key

        peer, out = resume(self.files.log, list(self.files.votes), self.identity, rng, now,
                           bind=bind)  # fmt: skip
        self.policy = Policy(self.void_action, agree_any=True, replacer=self._replacer)
        self.pending = {}
        self.filed = set()
        self.events = []
        self.grew_at = now
        self.told = len(peer.log)
        self.told_at = now
        sends = self.handle(out, now)
        sends.append((None, ["sync", peer.sync_point]))
        return sends + self.work(now)

    def enable_replace(self, make_identity: Callable[[int, int], Identity]) -> None:
        """As the host does (`play.heir.Heirs`): a "replace" seats a new identity, made by
        `make_identity(party, log length)`, for each party gone."""

        def replacer(silent: tuple[int, ...]) -> str:
            peer = self.peer
            if peer is None:
                return "no peer"
            keys = tuple(make_identity(p, len(peer.log)).public.raw for p in silent)
            try:
                out = peer.propose_void("replace", self.local_now, silent, keys)
            except ValueError as exc:
                return f"no agreement proposed: {exc}"
            self.extra += self.handle(out, self.local_now)
            return "proposed: replace"

        self.policy.replacer = replacer
        self._replacer = replacer

    def draw_key(self) -> bytes:
        """Where our randomness is drawn now (`Table.draw_key`), as the driver keys it."""
        assert self.peer is not None
        return self.peer.table.draw_key()

    def crash(self) -> None:
        """Everything but the files is lost."""
        self.peer = None

    @property
    def up(self) -> bool:
        return self.peer is not None

    # -- what comes in -----------------------------------------------------------------------

    def receive(self, frm: int, msg: Message, now: float) -> list[tuple[int | None, Message]]:
        peer = self.peer
        assert peer is not None
        if not isinstance(msg, list) or len(msg) != 2 or not isinstance(msg[0], str):
            return []
        tag, value = msg
        sends: list[tuple[int | None, Message]] = []
        if tag == "e" and isinstance(value, bytes):
            # as the driver: a copy of an entry the peer filed is dropped before it is decoded
            digest = hashlib.sha256(value).digest()
            if digest in self.filed:
                return []
            out = peer.receive(value, now, defer=True)
            if value in out.relay:
                self.filed.add(digest)
            sends += self.handle(out, now)
        elif tag in ("at", "sync") and type(value) is int and value >= 0:
            self.claims[frm] = max(value, self.claims.get(frm, -1))
            if 0 <= frm < len(peer.table.keys):
                peer.heard(peer.table.keys[frm], value, now)
            if tag == "sync":
                tail = self.tails.due(frm, value, len(peer.log), now)
                for wire in sync_answer(peer, value, self.pending.values(), tail=tail):
                    sends.append((frm, ["e", wire]))
        return sends + self.work(now)

    def tick(self, now: float, linked: set[int]) -> list[tuple[int | None, Message]]:
        """What the driver's ticker does: the peer's timeouts, the policy's turn to propose,
        a `sync` when the log has not grown for a while, an `at` when it has."""
        peer = self.peer
        assert peer is not None
        sends = self.handle(peer.tick(now, linked), now)
        sends += self.handle(self.policy.tick(peer, now), now)
        if not peer.table.closed and now - self.grew_at >= self.timeout / RESYNC:
            self.grew_at = now
            sends.append((None, ["sync", peer.sync_point]))
        length = len(peer.log)
        every = self.timeout / 4
        if length > self.told and (now - self.told_at >= every or peer.table.closed):
            self.told, self.told_at = length, now
            sends.append((None, ["at", length]))
        return sends + self.work(now)

    # -- what goes out -----------------------------------------------------------------------

    def handle(self, out: Output, now: float) -> list[tuple[int | None, Message]]:
        """Save, then send, then tell: the driver's order. Events go to the policy."""
        peer = self.peer
        assert peer is not None
        self.files.save(out)
        if out.rollback is not None:
            self.notes.append(f"rolled back to {out.rollback}, now {len(peer.log)} entries")
            self.filed.clear()
            for k in [k for k in self.pending if k >= out.rollback]:
                del self.pending[k]
        n = len(peer.log)
        for k in [k for k in self.pending if k < n]:
            del self.pending[k]
        sends: list[tuple[int | None, Message]] = []
        for wire in out.send:
            e = decode_entry(wire)
            if e.index >= n:
                self.pending[e.index] = wire
            sends.append((None, ["e", wire]))
        for wire in out.relay:
            author = decode_entry(wire).author
            sends.append((-1 - author, ["e", wire]))  # to everybody but the author
        if out.persist:
            self.grew_at = now
        for ev in out.events:
            if type(ev).__name__ in NOTED:
                self.notes.append(f"{_said(ev)} (log {len(peer.log)})")
        for wire in out.send:
            e = decode_entry(wire)
            if e.kind == "void":
                self.notes.append(f"signs void at {e.index}: {dict(e.body)}")
        if out.events:
            self.events += out.events
            self.all_events += out.events
            sends += self.handle(self.policy.react(peer, out.events, now), now)
        return sends

    def work(self, now: float) -> list[tuple[int | None, Message]]:
        """Apply what can be applied, and let the bot play our turns."""
        peer = self.peer
        assert peer is not None
        sends: list[tuple[int | None, Message]] = []
        for _ in range(10_000):
            idle = refusing = 0
            while peer.busy:
                got = peer.work(now)
                # a peer that says it has work and does nothing, again and again, would hang
                # its client (the driver loops on `busy` too): a liveness failure of its own;
                # so would one that only refuses, without end (each refusal drops what it
                # held, so a run of them is bounded by what it holds)
                empty = not (got.send or got.persist or got.events or got.votes is not None
                             or got.rollback is not None)  # fmt: skip
                refused = not (got.send or got.persist or got.votes is not None
                               or got.rollback is not None) and got.events != [] and all(
                    isinstance(e, Refused) for e in got.events)  # fmt: skip
                idle = idle + 1 if empty else 0
                refusing = refusing + 1 if refused else 0
                if idle > 3 or refusing > MAX_REFUSALS:
                    raise Stalled(f"party {self.party} is busy with nothing it can do "
                                  f"(log {len(peer.log)})")  # fmt: skip
                sends += self.handle(got, now)
            sends += self.handle(self.policy.join(peer, now), now)
            if not peer.on_turn:
                break
            view = peer.table.view
            assert view is not None
            seed = hashlib.sha256(self.secret + len(peer.log).to_bytes(8, "big")).digest()
            move = self.bot.choose_move(view, random.Random(seed))
            if self.moving is not None:
                self.extra += self.moving(self, move, self.world_now)
            sends += self.handle(peer.play(move, now, defer=True), now)
        return sends
