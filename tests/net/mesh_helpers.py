"""Shared helpers for the mesh tests: a table of four on loopback, and message collection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.link import SecureLink, connect
from buraco_p2p.net.mesh.mesh import Mesh, MeshConfig
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint, Invite

NICKS = ("ana", "bia", "caio", "duda")
FAST = MeshConfig(
    heartbeat_interval=0.2,
    heartbeat_timeout=2.0,
    direct_timeout=1.0,
    handshake_timeout=3.0,
    redial_min=0.02,
    redial_max=0.2,
)


@asynccontextmanager
async def table_of_four(
    config: MeshConfig = FAST, identities: list[Identity] | None = None
) -> AsyncIterator[list[Mesh]]:
    """Host plus three joiners on 127.0.0.1, seated in order, every link up."""
    ids = identities or [Identity.generate(n) for n in NICKS]
    async with (
        host_table(ids[0], config=config) as host,
        join_table(ids[1], host.invite, config=config) as b,
        join_table(ids[2], host.invite, config=config) as c,
        join_table(ids[3], host.invite, config=config) as d,
    ):
        meshes = [host, b, c, d]
        with trio.fail_after(10):
            for m in meshes:
                await m.wait_all_up()
        yield meshes


async def collect(mesh: Mesh, count: int, timeout: float = 10) -> list[tuple[PeerKey, Any]]:
    """Exactly `count` messages (fails on timeout)."""
    out: list[tuple[PeerKey, Any]] = []
    with trio.fail_after(timeout):
        while len(out) < count:
            out.append(await mesh.receive())
    return out


async def assert_quiet(mesh: Mesh, wait: float = 0.3) -> None:
    """Nothing more arrives (no duplicates trailing behind)."""
    with trio.move_on_after(wait):
        extra = await mesh.receive()
        raise AssertionError(f"unexpected extra message {extra!r}")


async def raw_link(invite: Invite, identity: Identity, ep: Endpoint, peer: PeerKey) -> SecureLink:
    """A bare secure link with the table's credentials, below the mesh: for peers that misbehave."""
    return await connect(
        ep.host,
        ep.port,
        identity,
        room_secret=invite.room_secret,
        table_id=invite.table_id,
        expected_peer=peer,
    )
