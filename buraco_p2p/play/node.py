"""One peer of a networked match, from the mesh to the end: agree the genesis, run the driver.

`open_node` hosts, joins or resumes a table and yields a running `Driver`. A new table gets a
directory in the data dir (`play.store`) before anything is sent; a resumed one reads it back:
the host listens on the port it had and restores its roster, a joiner dials the invite again,
and the saved log is replayed before catching up from the peers.

A joiner that cannot reach the host, on its first join or when it resumes, keeps trying with a
growing pause until the table's timeout: the host may be restarting too (it comes back on the
same port, from its own directory). The host's invite is announced only once its table
directory exists, so a host killed at any moment after announcing resumes with that invite.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.mesh import (
    Mesh,
    MeshConfig,
    PeerUp,
    RosterChanged,
    StreamReset,
)
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.table.table import DEFAULT_SEATS, Roster
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.genesis import GenesisError, assemble, check_terms, sign_terms, terms_body
from buraco_p2p.play.heir import Heirs, fetch_genesis
from buraco_p2p.play.store import StoreError, TableMeta, TableStore
from buraco_p2p.play.summary import Summary, save_summary, summary_of
from buraco_p2p.rules import RuleError, RuleSet
from buraco_p2p.session import Entry, Peer, decode_entry, parse_genesis
from buraco_p2p.session.errors import LogError

__all__ = ["agree_genesis", "join_patiently", "open_node", "start_on_mesh"]

log = logging.getLogger(__name__)

Backlog = list[tuple[PeerKey, Any]]

# The pause between attempts to reach the host doubles from the first to the last.
JOIN_RETRY_FIRST = 0.1
JOIN_RETRY_MAX = 2.0


@contextlib.asynccontextmanager
async def join_patiently(
    identity: Identity,
    invite: Invite,
    *,
    patience: float,
    config: MeshConfig | None = None,
    **kw: Any,
) -> AsyncIterator[Mesh]:
    """`join_table`, tried again with a growing pause while no address of the invite answers,
    for up to `patience` seconds (then its `MeshError` is raised). A refusal (`JoinRefused`)
    is final, and an error once seated is the caller's: only reaching the host is retried.
    `kw` goes to `join_table` (where we listen, what we advertise)."""
    deadline = trio.current_time() + patience
    delay = JOIN_RETRY_FIRST
    async with contextlib.AsyncExitStack() as stack:
        while True:
            try:
                joining = join_table(identity, invite, config=config, **kw)
                mesh = await stack.enter_async_context(joining)
            except MeshError as exc:
                if trio.current_time() + delay > deadline:
                    raise
                log.warning("%s; trying again in %g s", exc, delay)
                await trio.sleep(delay)
                delay = min(delay * 2, JOIN_RETRY_MAX)
                continue
            break
        yield mesh


Waiting = Callable[[tuple[str, ...]], None]


async def agree_genesis(
    mesh: Mesh,
    identity: Identity,
    rules: RuleSet | None,
    timeout_ms: int,
    held: Backlog | None = None,
    waiting: Waiting | None = None,
) -> tuple[Entry, Backlog]:
    """Host (`rules` given): wait for every seat, propose, collect, publish. Others: sign the
    host's terms if they name the roster, then take the signed genesis. Messages that arrive
    for the match meanwhile are returned for the driver.

    The host says whom it waits for (`waiting`, with the nicknames, "name (offline)" for a
    link that is down; empty once nobody) and sends the terms again, with its `ready`, to a
    seated player whose link comes back: one that left and joined again with the same code
    is in a new lobby, which needs both before it signs."""
    backlog: Backlog = list(held or [])
    if not mesh.is_host:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_say_ready, mesh)
            result = await _take_genesis(mesh, identity, backlog)
            nursery.cancel_scope.cancel()
        return result
    assert rules is not None
    tell = waiting or (lambda names: None)
    sigs: dict[bytes, bytes] = {identity.public.raw: b""}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_tell_waits, mesh, sigs, tell, rules.players)
        await mesh.wait_all_up(rules.players)
        assert mesh.roster is not None
        members = mesh.roster.members
        body = terms_body(members, rules, timeout_ms)
        await mesh.broadcast(["terms", body])
        sigs[identity.public.raw] = sign_terms(identity, mesh.table_id, body)
        nursery.start_soon(_terms_again, mesh, body, sigs)
        early, backlog = backlog, []
        while len(sigs) < len(members):
            key, msg = early.pop(0) if early else await mesh.receive()
            if _is_gsig(msg):  # a malformed one goes to the match, which drops it (2.10)
                sigs[key.raw] = msg[1]
            else:
                backlog.append((key, msg))
        nursery.cancel_scope.cancel()
    tell(())
    genesis = assemble(mesh.table_id, body, [sigs[m.key.raw] for m in members])
    await mesh.broadcast(["e", genesis.wire])
    return genesis, backlog


async def _tell_waits(mesh: Mesh, signed: dict[bytes, bytes], tell: Waiting, seats: int) -> None:
    """Say, whenever it changes, who the host's genesis waits for: the seated players that
    have not signed its terms (or whose link is down before they were sent), and an empty
    seat as such."""
    said: tuple[str, ...] | None = None
    while True:
        roster = mesh.roster
        names: list[str] = []
        if roster is not None:
            for m in roster.members:
                if m.key.raw in signed:
                    continue
                up = mesh.is_up(m.key)
                names.append(m.nickname if up else f"{m.nickname} (offline)")
            names += ["an empty seat"] * max(0, seats - len(roster.members))
        if tuple(names) != said:
            said = tuple(names)
            tell(said)
        await trio.sleep(0.25)


async def _terms_again(mesh: Mesh, body: Any, signed: dict[bytes, bytes]) -> None:
    while True:
        ev = await mesh.next_event()
        if isinstance(ev, PeerUp | StreamReset) and ev.peer.raw not in signed:
            with contextlib.suppress(MeshError):
                await mesh.send(ev.peer, ["ready"])
                await mesh.send(ev.peer, ["terms", body])


def _is_gsig(msg: Any) -> bool:
    return (
        isinstance(msg, list) and len(msg) == 2 and msg[0] == "gsig"
        and isinstance(msg[1], bytes) and len(msg[1]) == 64
    )  # fmt: skip


async def _say_ready(mesh: Mesh) -> None:
    """A joiner is ready as soon as it is seated: it says so to everyone seated, again
    whenever the roster changes (a lobby starts the match once every seat is ready)."""
    await mesh.broadcast(["ready"])
    while True:
        ev = await mesh.next_event()
        if isinstance(ev, RosterChanged):
            await mesh.broadcast(["ready"])


async def _take_genesis(mesh: Mesh, identity: Identity, backlog: Backlog) -> tuple[Entry, Backlog]:
    held = list(backlog)
    backlog.clear()
    while True:
        key, msg = held.pop(0) if held else await mesh.receive()
        roster = mesh.roster
        host = roster.host.key if roster is not None else None
        if key != host or roster is None or not isinstance(msg, list) or len(msg) != 2:
            backlog.append((key, msg))
            continue
        if msg[0] == "terms":
            check_terms(msg[1], roster.members, identity.public)
            await mesh.send(key, ["gsig", sign_terms(identity, mesh.table_id, msg[1])])
        elif msg[0] == "e" and isinstance(msg[1], bytes):
            try:
                genesis = decode_entry(msg[1])
                if genesis.index != 0:  # a later entry, sent before the genesis reached us
                    backlog.append((key, msg))
                    continue
                terms = parse_genesis(genesis)
            except LogError as exc:
                raise GenesisError(f"the host's genesis: {exc}") from None
            if [k.raw for k in terms.keys] != [m.key.raw for m in roster.members]:
                raise GenesisError("the host's genesis does not name the roster")
            return genesis, backlog
        else:
            backlog.append((key, msg))


@contextlib.asynccontextmanager
async def open_node(
    identity: Identity,
    root: Path,
    *,
    rules: RuleSet | None = None,
    invite: Invite | None = None,
    resume: bytes | None = None,
    table_id: bytes | None = None,
    rng_secret: bytes | None = None,
    identity_seed: bytes | None = None,
    timeout_ms: int = 120_000,
    on_invite: Callable[[Invite], None] | None = None,
    config: MeshConfig | None = None,
    port: int = 0,
    listen_host: str = "127.0.0.1",
    advertise: tuple[Endpoint, ...] | None = None,
    heir: bool = False,
    **driver_kw: Any,
) -> AsyncIterator[Driver]:
    """Host (`rules`), join (`invite`; with `heir`, to take over a seat: `play.heir`) or
    resume (`resume` = a table id in `root`; an heir resumes with `heir` too) a table;
    yields its running driver (the match goes on in the background until the block ends).
    We listen on `listen_host`:`port` (loopback, any free port unless told; a resumed host
    takes its saved port) and tell the peers `advertise` (by default, where we listen)."""
    where: dict[str, Any] = {"listen_host": listen_host, "advertise": advertise}
    store: TableStore
    if resume is not None:
        store = TableStore.for_table(resume, root)
        store.lock()
        try:
            meta = store.load_meta()
            secret, _ = store.load_secret()
            inv = Invite.from_bytes(meta.invite)
            if meta.host:
                saved = store.load_roster()
                roster = Roster.from_wire(saved, "saved roster") if saved is not None else None
                wires = store.load_log()
                if wires:
                    seats = len(parse_genesis(decode_entry(wires[0])).keys)
                else:
                    rules, timeout_ms = _saved_rules(store)
                    seats = rules.players
                cm = host_table(
                    identity, port=meta.port, table_id=inv.table_id, room_secret=inv.room_secret,
                    roster=roster, config=config, seats=seats, **where,
                )  # fmt: skip
            else:
                wires = store.load_log()
                patience = timeout_ms / 1000
                if wires:
                    patience = parse_genesis(decode_entry(wires[0])).timeout_ms / 1000
                cm = join_patiently(
                    identity, inv, patience=patience, config=config, port=port, **where
                )  # fmt: skip
            async with cm as mesh:
                if meta.host:
                    mesh.roster_saver = _roster_saver(store)
                if on_invite is not None:
                    on_invite(inv)
                if store.load_log():
                    driver = Driver.restore(mesh, identity, store, secret, **driver_kw)
                    backlog: Backlog = []
                else:  # killed before the genesis was saved: take it as a first start would
                    if heir:
                        genesis, backlog = await fetch_genesis(mesh, identity)
                    else:
                        genesis, backlog = await agree_genesis(mesh, identity, rules, timeout_ms)
                    driver = Driver.fresh(mesh, genesis, identity, store, secret, **driver_kw)
                async with _running(driver, backlog, root):
                    yield driver
        finally:
            store.close()
        return
    if invite is None:
        tid = table_id or secrets.token_bytes(16)
        seats = rules.players if rules is not None else DEFAULT_SEATS
        cm = host_table(identity, port=port, table_id=tid, config=config, seats=seats, **where)
    else:
        cm = join_patiently(
            identity, invite, patience=timeout_ms / 1000, config=config, port=port, **where
        )  # fmt: skip
    async with cm as mesh, start_on_mesh(
        mesh, identity, root, rules=rules, timeout_ms=timeout_ms,
        rng_secret=rng_secret, identity_seed=identity_seed, on_invite=on_invite,
        heir=heir, **driver_kw,
    ) as driver:  # fmt: skip
        yield driver


@contextlib.asynccontextmanager
async def start_on_mesh(
    mesh: Mesh,
    identity: Identity,
    root: Path,
    *,
    rules: RuleSet | None,
    timeout_ms: int = 120_000,
    held: Backlog | None = None,
    rng_secret: bytes | None = None,
    identity_seed: bytes | None = None,
    on_invite: Callable[[Invite], None] | None = None,
    heir: bool = False,
    waiting: Waiting | None = None,
    **driver_kw: Any,
) -> AsyncIterator[Driver]:
    """A new match on a mesh whose seats are taken (from `open_node`, or a lobby): the
    table directory first (then `on_invite` hears the invite), then the genesis (`waiting`
    hears whom the host waits for), then the driver."""
    inv = mesh.invite
    store = TableStore.for_table(inv.table_id, root)
    bound = inv.addresses[0].port if mesh.is_host and inv.addresses else 0
    meta = TableMeta(inv.to_bytes(), mesh.is_host, bound, 0)
    secret = store.create(meta, identity_seed, rng_secret)
    store.lock()
    try:
        if mesh.is_host and rules is not None:
            store.save_rules(rules.to_wire(), timeout_ms)
        if mesh.is_host:
            mesh.roster_saver = _roster_saver(store)
            if mesh.roster is not None:
                store.save_roster(mesh.roster.to_wire())
        if on_invite is not None:
            on_invite(inv)
        if heir:  # a match under way, whose log we take up from its genesis
            genesis, backlog = await fetch_genesis(mesh, identity)
        else:
            genesis, backlog = await agree_genesis(mesh, identity, rules, timeout_ms, held,
                                                   waiting)  # fmt: skip
        if mesh.is_host and mesh.roster is not None:
            store.save_roster(mesh.roster.to_wire())
        driver = Driver.fresh(mesh, genesis, identity, store, secret, **driver_kw)
        async with _running(driver, backlog, root):
            yield driver
    finally:
        store.close()


async def _keep_summary(driver: Driver) -> None:
    """Rewrite the table's summary (`play.summary`, what `resume` lists) whenever the match
    stands somewhere new."""
    said: Summary | None = None
    while True:
        now = summary_of(driver.peer.table)
        if now is not None and now != said:
            with contextlib.suppress(OSError):
                save_summary(driver.store.path, now)
            said = now
        await driver.wait_until(_grown_from(len(driver.peer.log)))


def _grown_from(length: int) -> Callable[[Peer], bool]:
    return lambda p: len(p.log) != length


def _roster_saver(store: TableStore) -> Callable[[Roster], None]:
    def save(roster: Roster) -> None:
        store.save_roster(roster.to_wire())

    return save


def _saved_rules(store: TableStore) -> tuple[RuleSet, int]:
    """A host restarted before its genesis was signed proposes the terms it saved."""
    wire, timeout_ms = store.load_rules()
    try:
        return RuleSet.from_wire(wire), timeout_ms
    except RuleError as exc:
        raise StoreError(f"rules: {exc}") from None


@contextlib.asynccontextmanager
async def _running(driver: Driver, backlog: Backlog, root: Path) -> AsyncIterator[None]:
    for key, msg in backlog:
        driver.deliver(key, msg)
    heirs = Heirs(driver, root / "heirs") if driver.mesh.is_host else None
    driver.replacer = heirs
    async with trio.open_nursery() as nursery:
        await nursery.start(driver.run)
        nursery.start_soon(_keep_summary, driver)
        if heirs is not None:  # the host seats bots for parties replaced by agreement
            nursery.start_soon(heirs.run)
        try:
            yield
        finally:
            nursery.cancel_scope.cancel()
            if heirs is not None:
                heirs.close()
