"""Starting a table: `host_table` and `join_table` build a `Mesh` and yield it running.

The host (seat 0) opens the table: it listens for joiners, seats itself in a fresh (or
restored) `HostTable` and takes `approve` as its door's callback. A joiner listens for its
peers, dials the invite's addresses and adopts the roster of the host's welcome. Both run the
mesh in a nursery of its own (`_mesh_scope`) that closes it on the way out, so a single error,
the mesh's or the caller's, comes out of the `async with` as itself, not in a group. What the
mesh does once running is `mesh.py`; this module only starts it.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

import trio

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.accepting import leaves
from buraco_p2p.net.mesh.admission import Approver, auto_approve
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.mesh.meshconfig import MeshConfig, MeshState
from buraco_p2p.net.reach.candidates import CandidateKind, host_candidates
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.table.table import DEFAULT_SEATS, HostTable, Member, Roster

__all__ = ["host_table", "join_table"]


def local_endpoints(port: int, listen_host: str) -> tuple[Endpoint, ...]:
    """Addresses to advertise: the bound one, or this machine's own (candidates.py)."""
    return tuple(c.endpoint for c in host_candidates(port, listen_host))[:16]


@contextlib.asynccontextmanager
async def _mesh_scope(
    identity: Identity,
    table_id: bytes,
    room_secret: bytes,
    *,
    config: MeshConfig | None,
    state: MeshState | None,
    is_host: bool,
) -> AsyncIterator[tuple[Mesh, trio.Nursery]]:
    """The mesh's nursery; a single error (ours or the caller's) comes out unwrapped."""
    try:
        async with trio.open_nursery() as nursery:
            mesh = Mesh(
                identity,
                table_id,
                room_secret,
                nursery,
                config=config or MeshConfig(),
                state=state,
                is_host=is_host,
            )
            try:
                yield mesh, nursery
            finally:
                mesh.close()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        found = leaves(group)
        if len(found) == 1:
            raise found[0] from None
        raise


@contextlib.asynccontextmanager
async def host_table(
    identity: Identity,
    *,
    listen_host: str = "127.0.0.1",
    port: int = 0,
    advertise: tuple[Endpoint, ...] | None = None,
    approve: Approver = auto_approve,
    config: MeshConfig | None = None,
    table_id: bytes | None = None,
    room_secret: bytes | None = None,
    roster: Roster | None = None,
    state: MeshState | None = None,
    seats: int = DEFAULT_SEATS,
    retired_secrets: tuple[bytes, ...] = (),
    mesh_secret: bytes | None = None,
) -> AsyncIterator[Mesh]:
    """Create a table of `seats` (the rules' player count), listen for joiners, and yield
    the host's mesh (seat 0).

    A host that restarts passes its table id, room secret, last `roster` and saved `state`
    (and listens on the same port, so the invite stays valid): the seated peers then
    reconnect on their own and delivery resumes where it stopped. A host that rotated its
    invite (`Mesh.rotate_invite`) also passes `retired_secrets` and `mesh_secret` (which is
    otherwise the table's first room secret).
    """
    table_id = table_id if table_id is not None else secrets.token_bytes(16)
    room_secret = room_secret if room_secret is not None else secrets.token_bytes(16)
    async with _mesh_scope(
        identity, table_id, room_secret, config=config, state=state, is_host=True
    ) as (mesh, nursery):
        mesh.retired_secrets = tuple(retired_secrets)
        mesh.mesh_secret = mesh_secret if mesh_secret is not None else room_secret
        bound = await nursery.start(mesh.acceptor.serve, listen_host, port)
        mesh.advertised = advertise or local_endpoints(bound, listen_host)
        me = Member(0, identity.public, identity.nickname, mesh.advertised)
        mesh.door.table = HostTable(table_id, me, restore=roster, seats=seats)
        mesh.door.approve = approve
        mesh.adopt_roster(mesh.door.table.roster)
        yield mesh


@contextlib.asynccontextmanager
async def join_table(
    identity: Identity,
    invite: Invite,
    *,
    listen_host: str = "127.0.0.1",
    port: int = 0,
    advertise: tuple[Endpoint, ...] | None = None,
    config: MeshConfig | None = None,
    state: MeshState | None = None,
    before_dial: Callable[[Mesh, int], Awaitable[None]] | None = None,
) -> AsyncIterator[Mesh]:
    """Join the table of `invite` (waiting for the host's approval) and yield our mesh.

    `before_dial(mesh, port)` runs once we listen on `port` and before we dial the host: the
    place to learn our public address and set `punch_port`/`punch_targets` (internet.py).

    `JoinRefused` if the host says no; `MeshError` if no address of the invite answers.
    Pass the `state` saved from `Mesh.snapshot()` to resume after a restart.
    """
    try:
        host_key = PeerKey(invite.host_key)
    except ValueError as exc:
        raise MeshError(f"the invite's host key is refused: {exc}") from None
    async with _mesh_scope(
        identity, invite.table_id, invite.room_secret, config=config, state=state, is_host=False
    ) as (mesh, nursery):
        bound = await nursery.start(mesh.acceptor.serve, listen_host, port)
        mesh.advertised = advertise or local_endpoints(bound, listen_host)
        # How the host's addresses were learnt, so the link to it says "mapped" where it is.
        for ep, kind in zip(invite.addresses, invite.kinds, strict=False):
            with contextlib.suppress(ValueError):
                mesh.candidate_kinds[ep] = CandidateKind(kind)
        if before_dial is not None:
            await before_dial(mesh, bound)
        link, roster = await mesh.dialer.connect_host(invite.addresses, host_key)
        if roster.host.key != host_key:
            await link.aclose()
            raise MeshError("the host's roster names someone else as host")
        mesh.adopt_roster(roster)
        nursery.start_soon(mesh.dialer.host_connector, link, invite.addresses, host_key)
        yield mesh
