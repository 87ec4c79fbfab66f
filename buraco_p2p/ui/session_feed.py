"""A `TableFeed` over a real networked session: the full-screen client against bot peers.

`SessionFeed.run` hosts a table in this process (your peer, all cryptography on) and starts
one `bot-peer` process per other seat, which join with the invite as a person's client would;
snapshots are rebuilt from the session after every batch of events, and `submit` plays
through the session driver (an illegal move is refused by the engine before anything is
signed or sent).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import trio

from buraco_p2p.engine import HandResult, IllegalMove, Move
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.identity import Identity, PeerKey
from buraco_p2p.net.invite import Invite
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.driver import Driver, my_turn
from buraco_p2p.play.node import open_node
from buraco_p2p.rules import RuleSet
from buraco_p2p.session import Event, Fault, HandEnded, HandStarted, TimedOut, TimeUp, Voided
from buraco_p2p.ui.feed import (
    ChatLine,
    Complaint,
    Fairness,
    MoveRefused,
    SaveUnavailable,
    SeatInfo,
    TableSnapshot,
)

__all__ = ["SessionFeed"]

MAX_CHAT = 50


class SessionFeed:
    """You at a new table with bot peer processes in the other seats."""

    def __init__(self, rules: RuleSet, identity: Identity, root: Path, *, bots: str = "") -> None:
        self.rules = rules
        self.identity = identity
        self.root = root
        self.bots = bots
        self.driver: Driver | None = None
        self._version = 0
        self._changed = trio.Event()
        self._chat: list[ChatLine] = [ChatLine(None, "setting up the table: bots are joining")]
        self._results: list[HandResult] = []
        self._complaints: list[Complaint] = []
        self._hand_over = False
        self._turn_since = time.monotonic()
        self._snapshot = self._build()

    def snapshot(self) -> TableSnapshot:
        return self._snapshot

    async def next_snapshot(self, after: int) -> TableSnapshot:
        while self._snapshot.version <= after:
            await self._changed.wait()
        return self._snapshot

    async def submit(self, move: Move) -> None:
        d = self.driver
        if d is None or not my_turn(d.peer):
            raise MoveRefused("it is not your turn", "wrong_player")
        try:
            d.play(move)
        except IllegalMove as e:
            raise MoveRefused(e.message, e.code.value) from None
        self._publish()
        await trio.lowlevel.checkpoint()

    async def say(self, text: str) -> None:
        if self.driver is not None and text.strip():
            self.driver.chat(text.strip())
            self._line(self._my_seat(), text.strip())

    async def ready(self) -> None:
        self._hand_over = False
        self._publish()
        await trio.lowlevel.checkpoint()

    async def save_log(self, path: Path) -> str:
        if self.driver is None:
            raise SaveUnavailable("no match yet")
        path.write_bytes(encode_log(e.wire for e in self.driver.peer.log))
        return f"buraco-p2p verify --partial {path}"

    async def run(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        bot_root = Path(tempfile.mkdtemp(prefix="bots-", dir=self.root))
        peer_args = ["--bot", self.bots] if self.bots else []
        cluster = Cluster(self.rules.players, bot_root, None, humans=[0], peer_args=peer_args)

        def on_invite(inv: Invite) -> None:
            cluster.invite = inv.to_text()
            for i in range(1, self.rules.players):
                cluster.join(i)

        with cluster:
            async with open_node(
                self.identity, self.root, rules=self.rules, on_invite=on_invite,
                on_events=self._on_events, on_chat=self._on_chat,
            ) as driver:  # fmt: skip
                self.driver = driver
                self._line(None, f"table {driver.peer.table.terms.table_id.hex()}: all proofs on")
                await trio.sleep_forever()

    # -- internals ---------------------------------------------------------------------------

    def _my_seat(self) -> int:
        d = self.driver
        seat = d.peer.table.my_seat if d is not None else None
        return 0 if seat is None else seat

    def _line(self, seat: int | None, text: str) -> None:
        self._chat.append(ChatLine(seat, text[:200]))
        del self._chat[:-MAX_CHAT]
        self._publish()

    def _on_chat(self, key: PeerKey, text: str) -> None:
        d = self.driver
        if d is None:
            return
        t = d.peer.table
        keys = [k.raw for k in t.terms.keys]
        party = keys.index(key.raw) if key.raw in keys else None
        seat = t.party_seat[party] if party is not None and t.party_seat else None
        self._line(seat, text)

    def _on_events(self, events: list[Event]) -> None:
        for ev in events:
            if isinstance(ev, HandStarted):
                self._line(None, f"hand {ev.hand + 1}: shuffled and dealt, every proof checked")
            elif isinstance(ev, HandEnded):
                self._results.append(ev.result)
                self._hand_over = True
            elif isinstance(ev, Fault) and ev.error.author is not None:
                self._complaints.append(Complaint(-1, str(ev.error.author), str(ev.error)))
            elif isinstance(ev, TimedOut | Voided):
                self._chat.append(ChatLine(None, type(ev).__name__))
            elif isinstance(ev, TimeUp):
                self._chat.append(ChatLine(None, "the time is up (a tied lead plays on)"))
        self._turn_since = time.monotonic()
        self._publish()

    def _publish(self) -> None:
        self._version += 1
        self._snapshot = self._build()
        self._changed.set()
        self._changed = trio.Event()

    def _seats(self) -> tuple[SeatInfo, ...]:
        d = self.driver
        n = self.rules.players
        sides = max(1, len(self._scores()))
        if d is None or not d.peer.table.seating:
            return tuple(SeatInfo(s, f"seat {s + 1}", s % sides, s % sides) for s in range(n))
        t = d.peer.table
        view = t.view
        out = []
        for seat, party in enumerate(t.seating):
            side = view.side_of(seat) if view is not None else seat % sides
            out.append(SeatInfo(seat, t.terms.nicknames[party], side, seat % sides,
                                party != d.peer.party, True,
                                t.terms.keys[party].fingerprint()))  # fmt: skip
        return tuple(out)

    def _scores(self) -> tuple[int, ...]:
        d = self.driver
        m = d.peer.table.match if d is not None else None
        if m is None:
            from buraco_p2p.engine import match_sides

            return (0,) * match_sides(self.rules)
        return tuple(m.scores)

    def _build(self) -> TableSnapshot:
        d = self.driver
        t = d.peer.table if d is not None else None
        m = t.match if t is not None else None
        view = t.view.copy() if t is not None and t.view is not None else None
        return TableSnapshot(
            title="network table (bot peers)",
            rules=self.rules,
            me=self._my_seat(),
            seats=self._seats(),
            view=view,
            scores=self._scores(),
            fairness=Fairness(True, complaints=tuple(self._complaints)),
            version=self._version,
            history=tuple(self._results),
            hand_over=self._hand_over,
            match_over=bool(t is not None and t.closed),
            winner=m.winner if m is not None and t is not None and t.closed else None,
            chat=tuple(self._chat),
            turn_since=self._turn_since,
            can_save_log=d is not None,
        )
