"""One session `Peer` run over a `Mesh`: the I/O loop around the sans-IO table protocol.

What the peer produces is held until the entries it persisted are appended to the table's
log file and synced; only then are its entries queued for sending and its events handed on.
So a process killed at any moment restarts from a log that holds every entry it ever acted
on, and `play.keyed` rebuilds its secrets from that log. The driver applies what it can before
it syncs (every message already received, every entry that can be applied, our own move when
a bot plays it) and syncs once for all of them: the sync, not the checks, is what a move costs
on this path, and nothing waits on an entry's effects until the sync that covers it is done.
A run of work without anything to send is cut every `BATCH_BUDGET` seconds, so a long catch-up
still lets the links breathe.

Messages on the mesh (msgpack arrays):

    ["e", wire]     a log entry (ours, or one we relay: the peer lists entries first heard
                    from others, which is how an author that equivocates meets both of its
                    signatures at every honest peer; relayed to every party but the author)
    ["sync", n]     "I hold the first n entries": the receiver answers with every entry of
                    its log from index n (its last step, once per length of its log, to one
                    that claims as much or more: it may be on another branch) and its own
                    entries not yet in its log, less those
                    already on their way to the asker (handed to its delivery stream and
                    not yet consumed there): so the stale `sync`s a peer queued while it was
                    away cost one answer between them, not one each
    ["at", n]       "I hold the first n entries", answered by nothing: how far a peer that
                    is catching up has got, sent every quarter of the table's timeout while
                    its log grows, and at once when its log closes (a peer that closed the
                    match waits for every linked party's claim of its whole log, `delivered`,
                    before it leaves)
    ["chat", text]  a line of table chat

A peer asks everyone for `sync` when it starts, whenever a link comes (back) up, and when its
log has not grown for `resync_after` seconds while the table waits for someone: that is the
whole catch-up and loss-recovery mechanism, since entries are idempotent (a peer drops
duplicates by hash) and self-authenticating (signed, chained). The periodic `sync` goes only
to the peers whose link is up: one that is away is asked when its link comes back.

A peer that is still catching up when the table's timeout passes is not missing: every `sync`
and `at` it sends is a claim the session notes (`Peer.heard`), and a party whose link is up and
whose claims advanced within the timeout is not reported (`buraco_p2p.session.presence`), so
nobody proposes to void or replace it while it works.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import time
from collections.abc import Callable
from typing import Any

import trio

from buraco_p2p.engine import Move
from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.reliable import SendBufferFull
from buraco_p2p.net.mesh.mesh import Mesh, PeerUp, StreamReset
from buraco_p2p.play.keyed import LogKeyedRandom
from buraco_p2p.play.store import StoreError, TableStore
from buraco_p2p.session import (
    Entry,
    Event,
    Output,
    Peer,
    SessionError,
    decode_entry,
    parse_genesis,
)
from buraco_p2p.session.policy import Policy
from buraco_p2p.session.resume import Tails, resume, sync_answer

__all__ = ["Chooser", "Driver", "bot_parties", "my_turn"]

log = logging.getLogger(__name__)

Chooser = Callable[[Peer, random.Random], Move]
MAX_CHAT = 500
# Work done between two syncs when nothing is to be sent meanwhile, in seconds.
BATCH_BUDGET = 0.02
# Messages already received that are filed before the work they allow is done.
MAX_DRAIN = 256


FAULTS_ENV = "BURACO_P2P_NETFAULTS"


def _faults_from_env() -> tuple[float, float, random.Random] | None:
    """Fault injection for tests: `drop,max_delay_s,seed` drops that share of the messages
    this peer sends and delays (so reorders) the rest by up to that long."""
    spec = os.environ.get(FAULTS_ENV)
    if not spec:
        return None
    drop, delay, seed = spec.split(",")
    return float(drop), float(delay), random.Random(int(seed))


def my_turn(peer: Peer) -> bool:
    """Whether the table waits for our move now (not for a round, a void or a fault)."""
    return peer.on_turn


def bot_parties(peer: Peer, bot_keys: frozenset[bytes] = frozenset(),
                others: bool = False) -> frozenset[int]:  # fmt: skip
    """The parties this client knows to be played by a bot, to mark them on screen: every
    other one when `others` (the bot peers of our own `play`); one whose genesis key is in
    `bot_keys` (the bot peers a host started: it made their identities); one that a `replace`
    in the log handed to an heir, which only a bot takes. A player's own nickname claims
    nothing here: anyone can call themselves a bot."""
    t = peer.table
    parties = [p for p in range(len(t.terms.keys)) if p != peer.party]
    if others:
        return frozenset(parties)
    heirs = {party for _, party, _ in t.successions}
    return frozenset(p for p in parties if p in heirs or t.terms.keys[p].raw in bot_keys)


class Driver:
    """Runs `peer` over `mesh`, persisting into `store`. `choose` plays our turns (a bot);
    without it the caller answers with `play`. `on_events` sees every event, `on_chat` every
    chat line; `void_action` ("void", "end" or "replace"), if set, is proposed once a party
    has kept the table waiting past the table's timeout."""

    def __init__(
        self,
        mesh: Mesh,
        peer: Peer,
        store: TableStore,
        *,
        secret: bytes,
        saved: int,
        choose: Chooser | None = None,
        on_events: Callable[[list[Event]], None] | None = None,
        on_chat: Callable[[PeerKey, str], None] | None = None,
        void_action: str | None = None,
        resync_after: float = 1.0,
        tick_every: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.mesh = mesh
        self.peer = peer
        self.store = store
        self.keys = parse_genesis(peer.log[0]).keys
        self.choose = choose
        self.on_events = on_events
        self.on_chat = on_chat
        # Whom we name and when we propose or join: the one policy the simulator searches.
        self.policy = Policy(void_action)
        self.resync_after = resync_after
        self.tick_every = tick_every
        self.clock = clock
        self._secret = secret
        self._saved = saved
        self._pending: dict[int, bytes] = {}
        self._held = Output()
        self._filed: set[bytes] = set()
        self._send_in, self._send_out = trio.open_memory_channel[tuple[PeerKey | None, Any]](
            1 << 20
        )
        self._changed = trio.Event()
        self._grew_at = clock()
        # The last `at` we sent: the log length it gave and when.
        self._told = len(peer.log)
        self._told_at = clock()
        # Entries handed to each peer's delivery stream (by wire) with their message number
        # there, None while still queued here: what a `sync` need not send again.
        self._given: dict[PeerKey, dict[bytes, int | None]] = {}
        # Peers whose send buffer is full, said once until a message to them fits again.
        self._full: set[PeerKey] = set()
        self.refused = 0
        # Clock readings for measurement: when each entry was applied here, when we played.
        self.applied_at: dict[int, float] = {}
        self.played_at: dict[int, float] = {}
        # Each party's furthest claim of the log it holds (by key), which says when our last
        # entry has arrived; and when each that asks from our end is sent our last step.
        self._claims: dict[bytes, int] = {}
        self._tails = Tails(peer.table.terms.timeout_ms / 1000)

    # -- the agreement policy's settings ------------------------------------------------------

    @property
    def void_action(self) -> str | None:
        """What this client proposes once a party has kept the table waiting past its
        timeout ("void", "end", "replace"; None: nothing)."""
        return self.policy.void_action

    @void_action.setter
    def void_action(self, action: str | None) -> None:
        self.policy.void_action = action

    @property
    def agree_any(self) -> bool:
        """Whether we join any proposal we may join (the bots' policy)."""
        return self.policy.agree_any

    @agree_any.setter
    def agree_any(self, value: bool) -> None:
        self.policy.agree_any = value

    @property
    def replacer(self) -> Callable[[tuple[int, ...]], str] | None:
        """The host's: seats new identities for the parties a "replace" names."""
        return self.policy.replacer

    @replacer.setter
    def replacer(self, value: Callable[[tuple[int, ...]], str] | None) -> None:
        self.policy.replacer = value

    @property
    def waiting_on(self) -> tuple[int, ...]:
        """The parties the table last waited for past its timeout."""
        return self.policy.waiting_on

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def fresh(
        cls,
        mesh: Mesh,
        genesis: Entry,
        identity: Identity,
        store: TableStore,
        secret: bytes,
        **kw: Any,
    ) -> Driver:
        """A new match: the genesis is written first, then the peer starts."""
        store.append([genesis.wire])
        return cls._build(mesh, [genesis.wire], identity, store, secret, **kw)

    @classmethod
    def restore(
        cls, mesh: Mesh, identity: Identity, store: TableStore, secret: bytes, **kw: Any
    ) -> Driver:
        """A restarted match: the saved log is replayed through a fresh peer."""
        wires = store.load_log()
        if not wires:
            raise StoreError("log: no saved entry to resume from")
        try:
            d = cls._build(mesh, wires, identity, store, secret, **kw)
        except SessionError as exc:
            raise StoreError(f"{store.path / 'log'}: the saved log does not check: {exc}") from None
        applied = len(d.peer.table.log)
        if applied < len(wires):
            # The file is ours and held only entries we had accepted: one that no longer
            # checks was changed on disk, and nothing after it can be trusted either.
            raise StoreError(
                f"{store.path / 'log'}: saved entry {applied} of {len(wires)} does not check "
                "(the file was changed)"
            )
        return d

    @classmethod
    def _build(
        cls, mesh: Mesh, wires: list[bytes], identity: Identity, store: TableStore,
        secret: bytes, **kw: Any,
    ) -> Driver:  # fmt: skip
        rng = LogKeyedRandom(secret)
        minute: float = kw.pop("minute", 60.0)  # a timed match's minute, in clock seconds
        clock: Callable[[], float] = kw.get("clock", time.monotonic)

        def bind(peer: Peer) -> None:
            rng.position = lambda: peer.table.draw_key()

        # the peer's step timer runs on the driver's clock, so an injected clock times it all
        now = clock()
        peer, out = resume(wires, (), identity, rng, now, minute=minute, bind=bind)
        d = cls(mesh, peer, store, secret=secret, saved=len(wires), **kw)
        d._handle(out)
        # the voids we signed before a restart: we stand by them (and send them again)
        for wire in store.load_votes():
            try:
                d._handle(peer.restore_vote(wire))
            except SessionError as exc:
                where = store.path / "votes"
                raise StoreError(f"{where}: a saved void does not check: {exc}") from None
        d._flush()
        return d

    # -- API for the caller ------------------------------------------------------------------

    @property
    def table_closed(self) -> bool:
        return self.peer.table.closed

    async def wait_until(self, pred: Callable[[Peer], bool]) -> None:
        while not pred(self.peer):
            await self._changed.wait()

    def play(self, move: Move) -> None:
        """Our move (raises the engine's `IllegalMove` and changes nothing if illegal)."""
        self._play(move)
        self._flush()

    def _play(self, move: Move) -> None:
        self.played_at[len(self.peer.log)] = self.clock()
        self._handle(self.peer.play(move, self.clock(), defer=True))
        self._bump()

    def agree(self, action: str) -> str:
        """A person's agreement to void the hand ("void"), end the match ("end") or replace
        the parties gone by bots ("replace", the host only) after a timeout (`Policy.agree`).
        Returns what happened, in words."""
        said, out = self.policy.agree(self.peer, action, self.clock())
        self._handle(out)
        self._flush()
        return said

    @property
    def overdue(self) -> frozenset[int]:
        """The parties our clock has seen keep the current step waiting past the table's
        timeout: whom `agree` may name (empty while nobody has)."""
        return self.peer.overdue

    def choices(self) -> dict[str, str]:
        """What each agreement would do now, in words, for a screen to offer (empty while
        nobody keeps the table waiting past its timeout, or once we agreed)."""
        return self.policy.choices(self.peer)

    async def delivered(self, patience: float) -> bool:
        """Wait (up to `patience` seconds) until every other party whose link is up claims
        our whole log: a client that leaves at the end of a match first hands on its last
        entries (they are saved too: `resume` sends them again)."""
        with trio.move_on_after(patience):
            while True:
                n = len(self.peer.log)
                behind = [p for p in self._linked()
                          if self._claims.get(self.peer.table.keys[p].raw, -1) < n]  # fmt: skip
                if not behind:
                    return True
                await trio.sleep(min(0.2, patience))
        return False

    def propose_replace(self, silent: tuple[int, ...], heirs: tuple[bytes, ...]) -> None:
        """Propose a "replace" agreement passing the `silent` parties' seats to the identity
        keys `heirs` (one each, in order); held like every output until the next flush, so it
        is on disk before it is sent. Raises `ValueError`, changing nothing, where the table
        cannot take that proposal now."""
        self._handle(self.peer.propose_void("replace", self.clock(), silent, heirs))

    def deliver(self, key: PeerKey, msg: Any) -> None:
        """A message the mesh delivered from `key` before this driver ran (a backlog kept
        while the table was being set up): handled exactly as one received now."""
        self._on_message(key, msg)

    def chat(self, text: str) -> None:
        self._queue(None, ["chat", text[:MAX_CHAT]])

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._sender)
            nursery.start_soon(self._receiver)
            nursery.start_soon(self._mesh_events)
            nursery.start_soon(self._ticker)
            self._queue(None, ["sync", self.peer.sync_point])
            task_status.started()
            await self._work()

    # -- internals ---------------------------------------------------------------------------

    def _queue(self, to: PeerKey | None, msg: Any) -> None:
        self._send_in.send_nowait((to, msg))

    def _handle(self, out: Output) -> None:
        """Hold what the peer produced until the next `_flush`."""
        t = self.clock()
        for e in out.persist:
            self.applied_at[e.index] = t
        self._held.extend(out)

    def _flush(self) -> None:
        """Persist what is held (durable on return), then queue its sends, then its events;
        again for what those events produce. Called before every wait, so nothing held is
        ever seen by the network or the caller before it is on disk."""
        while self._held.persist or self._held.send or self._held.relay or self._held.events:
            out, self._held = self._held, Output()
            self._act(out)

    def _act(self, out: Output) -> None:
        if out.rollback is not None:  # the log was cut back (an equivocation): so is the file
            # what was filed for the cut branch may be due again (an entry it crowded out
            # comes back in answer to our `sync`)
            self._filed.clear()
            if out.rollback < self._saved:
                self.store.cut(out.rollback)
                self._saved = out.rollback
            for k in [k for k in self._pending if k >= out.rollback]:
                del self._pending[k]
        fresh = [e for e in out.persist if e.index >= self._saved]
        if fresh:
            self.store.append([e.wire for e in fresh])
            self._saved = fresh[-1].index + 1
        n = len(self.peer.log)
        for k in [k for k in self._pending if k < n]:
            del self._pending[k]
        if out.votes is not None:  # saved before they are sent: a restart signs no other
            self.store.save_votes(out.votes)
        for wire in out.send:
            e = decode_entry(wire)
            if e.index >= n:
                self._pending[e.index] = wire
            self._queue(None, ["e", wire])
        for wire in out.relay:
            # to every other party but the author, who gains nothing from its own entry back
            author = self.keys[decode_entry(wire).author].raw
            for key in self.mesh.peers():
                if key.raw != author:
                    self._queue(key, ["e", wire])
        if out.persist:
            self._grew_at = self.clock()
            self._bump()
        if out.events:
            self._handle(self.policy.react(self.peer, out.events, self.clock()))
            if self.on_events is not None:
                self.on_events(out.events)

    def _bump(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _work(self) -> None:
        """Apply what can be applied and play our turn if a bot plays for us, syncing once
        for a run of entries: before anything is to be sent, and every `BATCH_BUDGET`
        seconds of work (then the network gets its turn)."""
        since = self.clock()
        while True:
            while self.peer.busy:
                self._handle(self.peer.work(self.clock()))
                if self._held.send or self.clock() - since >= BATCH_BUDGET:
                    self._flush()
                    await trio.sleep(0)
                    since = self.clock()
            self._handle(self.policy.join(self.peer, self.clock()))
            if self.choose is not None and my_turn(self.peer):
                seed = self._secret + len(self.peer.log).to_bytes(8, "big")
                view_rng = random.Random(seed)
                move = self.choose(self.peer, view_rng)
                self._play(move)
                continue
            self._flush()
            return

    async def _sender(self) -> None:
        faults = _faults_from_env()
        async with trio.open_nursery() as nursery:
            async for to, msg in self._send_out:
                if faults is None:
                    await self._send(to, msg)
                    continue
                drop, delay, rng = faults
                if rng.random() < drop:
                    self._forget(to, msg)
                    continue  # lost: the receiver's sync has to find it again
                nursery.start_soon(self._send_later, to, msg, rng.uniform(0, delay))

    async def _send_later(self, to: PeerKey | None, msg: Any, delay: float) -> None:
        await trio.sleep(delay)
        await self._send(to, msg)

    async def _send(self, to: PeerKey | None, msg: Any) -> None:
        """Hand `msg` to `to`'s delivery stream (to everyone's for None), one peer at a time,
        so a peer whose buffer is full costs only its own copy and one line until it drains."""
        for key in self.mesh.peers() if to is None else (to,):
            seq = self.mesh.handed(key)[0]  # the number `send` gives it, before any wait
            try:
                await self.mesh.send(key, msg)
            except (SendBufferFull, MeshError) as exc:
                self._forget(key, msg)
                if key not in self._full:
                    self._full.add(key)
                    log.warning(
                        "send failed: %s (what does not fit is sent again when it asks; "
                        "said once until it drains)", exc,
                    )
                continue
            if key in self._full:
                self._full.discard(key)
                log.info("sending to %s again", key.fingerprint())
            if msg[0] == "e":
                self._gave(key, msg[1], seq)

    def _gave(self, key: PeerKey, wire: bytes, seq: int) -> None:
        """`wire` went into `key`'s delivery stream as message `seq`; forget what it has
        consumed since (the oldest first: numbers grow in the order they are given)."""
        given = self._given.setdefault(key, {})
        consumed = self.mesh.handed(key)[1]
        given.pop(wire, None)
        given[wire] = seq
        while given:
            first = next(iter(given))
            number = given[first]
            if number is None or number >= consumed:
                break
            del given[first]

    def _forget(self, to: PeerKey | None, msg: Any) -> None:
        """A message that never went into `to`'s stream: a later `sync` sends it again."""
        if to is not None and msg[0] == "e":
            self._given.get(to, {}).pop(msg[1], None)

    def _answer_sync(self, key: PeerKey, n: int) -> None:
        """Send `key` every entry from index `n` and our own not yet in the log, less those
        on their way to it: handed to its stream and not consumed there yet (a `sync` it sent
        before taking them in asks for them again). Once it has consumed an entry and still
        asks, it gets the entry again: it may have lost it with a restart."""
        given = self._given.setdefault(key, {})
        _, consumed = self.mesh.handed(key)
        for wire, seq in list(given.items()):
            if seq is not None and seq < consumed:
                del given[wire]
        tail = self._tails.due(key.raw, n, len(self.peer.log), self.clock())
        for wire in sync_answer(self.peer, n, self._pending.values(), tail=tail):
            if wire not in given:
                given[wire] = None
                self._queue(key, ["e", wire])

    async def _receiver(self) -> None:
        while True:
            key, msg = await self.mesh.receive()
            self._on_message(key, msg)
            for _ in range(MAX_DRAIN):
                try:
                    key, msg = self.mesh.receive_nowait()
                except trio.WouldBlock:
                    break
                self._on_message(key, msg)
            await self._work()

    def _on_message(self, key: PeerKey, msg: Any) -> None:
        if not isinstance(msg, list) or not msg or not isinstance(msg[0], str):
            log.info("malformed message from %s", key.fingerprint())
            return
        tag = msg[0]
        if tag == "e" and len(msg) == 2 and isinstance(msg[1], bytes):
            # Every entry comes once from its author and once relayed by each other party:
            # a copy byte for byte of one the peer has filed is dropped before it is decoded.
            digest = hashlib.sha256(msg[1]).digest()
            if digest in self._filed:
                return
            out = self.peer.receive(msg[1], self.clock(), defer=True)
            self.refused += sum(1 for ev in out.events if type(ev).__name__ == "Refused")
            if msg[1] in out.relay:  # filed (or held as evidence): a copy changes nothing
                self._filed.add(digest)  # until a roll-back (`_handle`)
            self._handle(out)
        elif tag == "at" and len(msg) == 2 and type(msg[1]) is int and msg[1] >= 0:
            self._claimed(key, msg[1])
            self.peer.heard(key, msg[1], self.clock())
        elif tag == "sync" and len(msg) == 2 and type(msg[1]) is int and msg[1] >= 0:
            self._claimed(key, msg[1])
            self.peer.heard(key, msg[1], self.clock())
            self._answer_sync(key, msg[1])
        elif tag == "chat" and len(msg) == 2 and isinstance(msg[1], str) and self.on_chat:
            self.on_chat(key, msg[1][:MAX_CHAT])
        # anything else (genesis agreement leftovers, a newer client's tags) is ignored

    def _claimed(self, key: PeerKey, position: int) -> None:
        self._claims[key.raw] = max(position, self._claims.get(key.raw, -1))

    async def _mesh_events(self) -> None:
        while True:
            ev = await self.mesh.next_event()
            if isinstance(ev, PeerUp | StreamReset):
                self._queue(ev.peer, ["sync", self.peer.sync_point])

    async def _ticker(self) -> None:
        while True:
            await trio.sleep(self.tick_every)
            now = self.clock()
            self._handle(self.peer.tick(now, self._linked()))
            self._handle(self.policy.tick(self.peer, now))
            self._flush()
            if not self.peer.table.closed and now - self._grew_at >= self.resync_after:
                self._grew_at = now
                for key in self.mesh.peers():
                    if self.mesh.is_up(key):
                        self._queue(key, ["sync", self.peer.sync_point])
            self._tell_progress(now)
            await self._work()

    def _linked(self) -> set[int]:
        """The parties whose link from us is up."""
        keys = self.peer.table.keys
        return {p for p, key in enumerate(keys) if p != self.peer.party and self.mesh.is_up(key)}

    def _tell_progress(self, now: float) -> None:
        """Send `at` if our log grew since the last one and a quarter of the table's timeout
        has passed: a peer catching up shows it is answering before the others' timeout."""
        length = len(self.peer.log)
        every = self.peer.table.terms.timeout_ms / 4000
        # a closed log is told at once: the others may be waiting to leave until we hold it
        if length <= self._told or (now - self._told_at < every and not self.peer.table.closed):
            return
        self._told, self._told_at = length, now
        self._queue(None, ["at", length])
