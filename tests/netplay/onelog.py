"""A table of real drivers in one process, over real mesh links on loopback, for the tests of
one match, one log (docs/protocol.md 4.5-4.6).

Every seat is `play.node.open_node`: its own mesh, table directory, saved log and votes file,
and a bot for its turns (the bot peers' policy: it joins any proposal it may). The test holds
every driver, so it can make one of them a hostile party: sign with its key what it likes
(`signed`), send it to whom it likes (`send`), or keep what its driver sends from leaving
(`withhold`).
"""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import AsyncIterator, Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.bots import make_bot
from buraco_p2p.bots.selfplay import resolve_rules
from buraco_p2p.engine import Move
from buraco_p2p.logfile import decode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.botpeer import derive
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.node import open_node
from buraco_p2p.session import Entry, Event, Peer, decode_entry, make_entry

__all__ = ["Seat", "Table", "bot_table", "until"]


def _choose(peer: Peer, rng: random.Random) -> Move:
    view = peer.table.view
    assert view is not None
    return make_bot("heuristic").choose_move(view, rng)


@dataclass
class Seat:
    """One client of the table: its identity, driver, directory and every event it saw."""

    index: int
    identity: Identity
    root: Path
    driver: Driver | None = None
    events: list[Event] = field(default_factory=list)
    scope: trio.CancelScope | None = None
    held: Callable[[Any], bool] | None = None  # what its driver may not send (`withhold`)

    @property
    def d(self) -> Driver:
        assert self.driver is not None
        return self.driver

    @property
    def party(self) -> int:
        return self.d.peer.party

    def saved_log(self) -> list[bytes]:
        """The log file its table directory holds."""
        (path,) = self.root.glob("tables/*/log")
        return decode_log(path.read_bytes())

    def signed(self, **fields: Any) -> Entry:
        """An entry signed with this seat's key (table id and author filled in while it
        runs)."""
        if "table" not in fields or "author" not in fields:
            t = self.d.peer.table
            fields.setdefault("table", t.terms.table_id)
            fields.setdefault("author", self.party)
        return make_entry(self.identity, **fields)

    def variant(self, e: Entry) -> Entry:
        """A second entry of this seat's for `e`'s index and `p`, its body changed."""
        return self.signed(index=e.index, prev=e.prev, kind=e.kind,
                           body={**e.body, "x": 1})  # fmt: skip


@dataclass
class Table:
    seats: list[Seat]
    nursery: trio.Nursery
    rules: Any
    timeout_ms: int
    tmp: Path
    invite: Invite | None = None

    def by_party(self, party: int) -> Seat:
        return next(s for s in self.seats if s.driver is not None and s.party == party)

    def others(self, seat: Seat) -> list[Seat]:
        return [s for s in self.seats if s is not seat]

    async def send(self, frm: Seat, wire: bytes, to: Collection[Seat]) -> None:
        """`wire` sent by `frm` to each of `to` over its links."""
        for s in to:
            await frm.d.mesh.send(s.identity.public, ["e", wire])

    def withhold(self, seat: Seat, kinds: Collection[str]) -> None:
        """From now on `seat`'s driver sends none of its own entries of these kinds (it
        still holds and applies them)."""
        queue = seat.d._queue

        def held(to: Any, msg: Any) -> None:
            if isinstance(msg, list) and msg[:1] == ["e"]:
                e = decode_entry(msg[1])
                if e.author == seat.party and e.kind in kinds:
                    return
            queue(to, msg)

        seat.d._queue = held  # type: ignore[method-assign]

    async def stop(self, seat: Seat) -> None:
        """The seat's process ends (its node closed, its files kept)."""
        assert seat.scope is not None
        seat.scope.cancel()
        with trio.fail_after(30):
            while seat.driver is not None:
                await trio.sleep(0.01)

    async def restart(self, seat: Seat) -> None:
        """The seat comes back: `resume` of its table directory."""
        (secret,) = seat.root.glob("tables/*/secret")
        await self.nursery.start(self._node, seat, {"resume": bytes.fromhex(secret.parent.name)})
        with trio.fail_after(60):
            while seat.driver is None:
                await trio.sleep(0.01)

    async def _node(
        self, seat: Seat, where: dict[str, Any],
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:  # fmt: skip
        with trio.CancelScope() as scope:
            seat.scope = scope
            task_status.started()
            async with open_node(
                seat.identity, seat.root, timeout_ms=self.timeout_ms, choose=_choose,
                void_action="void", identity_seed=derive(seat.index, "id"),
                rng_secret=derive(seat.index, "rng"), on_events=seat.events.extend,
                tick_every=0.05, resync_after=0.5, **where,
            ) as driver:  # fmt: skip
                driver.agree_any = True
                seat.driver = driver
                await trio.sleep_forever()
        seat.driver = None


@contextlib.asynccontextmanager
async def bot_table(
    tmp_path: Path, n: int, *, preset: str = "classic", rules: tuple[str, ...] = ("hands=1",),
    timeout_ms: int = 1500,
) -> AsyncIterator[Table]:  # fmt: skip
    """A table of `n` bot clients in this process, every one seated and the match begun."""
    ruleset = resolve_rules(preset, rules, players=n)
    seats = [Seat(i, Identity.from_seed(derive(i, "id"), f"p{i}"), tmp_path / f"p{i}")
             for i in range(n)]  # fmt: skip
    invites: list[Invite] = []
    async with trio.open_nursery() as nursery:
        table = Table(seats, nursery, ruleset, timeout_ms, tmp_path)
        host = {"rules": ruleset, "on_invite": invites.append}
        await nursery.start(table._node, seats[0], host)
        with trio.fail_after(60):
            while not invites:
                await trio.sleep(0.01)
        table.invite = invites[0]
        for s in seats[1:]:
            await nursery.start(table._node, s, {"invite": invites[0]})
        await until("every seat seated",
                    lambda: all(s.driver is not None and len(s.d.peer.log) > 1 for s in seats))
        yield table
        nursery.cancel_scope.cancel()


async def until(what: str, ready: Callable[[], bool], timeout: float = 180.0,
                state: Callable[[], str] = lambda: "") -> None:  # fmt: skip
    with trio.move_on_after(timeout):
        while not ready():
            await trio.sleep(0.02)
    assert ready(), f"{what}: not within {timeout:.0f} s {state()}"


def logs(table: Table, seats: Collection[Seat]) -> list[list[bytes]]:
    return [[e.wire for e in s.d.peer.log] for s in seats]


def one_log(logs_: list[list[bytes]]) -> bool:
    """Whether the logs are one log: of any two, one is a prefix of the other."""
    ordered = sorted(logs_, key=len)
    return all(b[: len(a)] == a for a, b in itertools.pairwise(ordered))


@contextlib.contextmanager
def no_rollback(seats: Collection[Seat]) -> Iterator[None]:
    """Fail if any of these seats' saved logs loses an entry while the block runs."""
    before = {s.index: s.saved_log() for s in seats}
    yield
    for s in seats:
        now = s.saved_log()
        assert now[: len(before[s.index])] == before[s.index], f"seat {s.index} lost entries"


def kinds(entries: list[bytes]) -> list[str]:
    return [decode_entry(w).kind for w in entries]
