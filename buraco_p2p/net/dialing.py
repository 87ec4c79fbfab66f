"""Dialing: how a peer opens its links, and the loops that keep them open.

A joiner dials the host (`connect_host`), and after its welcome keeps that link up with
`host_connector`; for every seated peer with a lower seat than ours (not the host) it runs a
`peer_connector`: the direct link first (every address of the peer's roster entry, or a
simultaneous open toward the addresses `Mesh.punch_targets` names), the relay through the
host when none opens, and again with a capped backoff whenever the link dies.

The mesh proper (`mesh.py`) owns the links once they are open; this module only opens them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.errors import LinkError, MeshError, NetError
from buraco_p2p.net.identity import PeerKey
from buraco_p2p.net.invite import Endpoint
from buraco_p2p.net.link import ConnectError, SecureLink, connect, handshake
from buraco_p2p.net.punch import PunchError, simultaneous_open
from buraco_p2p.net.table import (
    JoinRefused,
    Roster,
    RosterError,
    join_message,
    mesh_message,
    parse_welcome,
)

if TYPE_CHECKING:
    from buraco_p2p.net.mesh import Mesh

__all__ = ["Dialer"]


class Dialer:
    """The dialing side of one mesh: opens links and hands them to `Mesh._run_link`."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh

    def secret_for(self, peer: PeerKey) -> bytes:
        """The host is dialed with the invite's secret, everyone else with the mesh secret."""
        mesh = self.mesh
        return mesh.room_secret if mesh.roster is None or mesh._is_host_key(peer) else (
            mesh.mesh_secret
        )

    async def connect(self, ep: Endpoint, peer: PeerKey) -> SecureLink:
        """A direct link to `peer` at `ep`, keyed by this table's room or mesh secret."""
        mesh = self.mesh
        if mesh.punch_port is not None and ep in mesh.punch_targets:
            return await self.punch(ep, peer)
        return await connect(
            ep.host,
            ep.port,
            mesh.identity,
            room_secret=self.secret_for(peer),
            table_id=mesh.table_id,
            expected_peer=peer,
            timeout=mesh.config.direct_timeout,
        )

    async def punch(self, ep: Endpoint, peer: PeerKey) -> SecureLink:
        """A link to `peer` by simultaneous open to `ep` (the peer dials us at the same time)."""
        mesh = self.mesh
        assert mesh.punch_port is not None
        try:
            stream = await simultaneous_open(mesh.punch_port, ep, window=mesh.punch_window)
        except PunchError as exc:
            raise ConnectError(str(exc)) from None
        link = await handshake(
            stream, mesh.identity, room_secret=self.secret_for(peer), table_id=mesh.table_id,
            initiator=True, expected_peer=peer, timeout=mesh.config.direct_timeout,
            address=str(ep),
        )  # fmt: skip
        mesh.punched.add(peer)
        return link

    async def dial_direct(self, key: PeerKey) -> SecureLink | None:
        mesh = self.mesh
        if mesh._direct_refused(key) or mesh.roster is None:
            return None
        member = mesh.roster.member(key)
        if member is None:
            return None
        for ep in member.addresses:
            try:
                link = await self.connect(ep, key)
            except LinkError as exc:
                mesh._reject(str(ep), exc)
                continue
            try:
                await link.send(mesh_message())
            except LinkError as exc:
                mesh._reject(str(ep), exc)
                await link.aclose()
                continue
            return link
        return None

    async def peer_connector(self, key: PeerKey) -> None:
        mesh = self.mesh
        delay = mesh.config.redial_min
        while mesh._seated(key):
            link = await self.dial_direct(key)
            if link is not None:
                delay = mesh.config.redial_min
                await mesh._run_link(key, link, relayed=False)
            else:
                link = await mesh.relays.dial(key)
                if link is not None:
                    delay = mesh.config.redial_min
                    await mesh.relays.run(key, link)
            await trio.sleep(delay)
            delay = min(delay * 2, mesh.config.redial_max)

    async def connect_host(self, addresses: tuple[Endpoint, ...], host: PeerKey) -> tuple[
        SecureLink, Roster
    ]:
        mesh = self.mesh
        errors: list[str] = []
        for ep in addresses:
            try:
                link = await self.connect(ep, host)
            except LinkError as exc:
                errors.append(str(exc))
                continue
            try:
                await link.send(join_message(mesh.advertised))
                answer = await link.receive()  # no timeout: a person may be deciding
                roster, mesh_secret = parse_welcome(answer, link.label, mesh.me, mesh.table_id)
            except JoinRefused:
                await link.aclose()
                raise
            except NetError as exc:
                errors.append(str(exc))
                await link.aclose()
                continue
            except BaseException:
                # Given up (cancelled) while waiting for the answer: hang up now, so the host
                # withdraws its question instead of seating someone who is gone.
                with trio.CancelScope(shield=True):
                    await link.aclose()
                raise
            self.adopt_mesh_secret(mesh_secret)
            return link, roster
        raise MeshError("cannot reach the host: " + ("; ".join(errors) or "no addresses"))

    def adopt_mesh_secret(self, secret: bytes) -> None:
        """Joiner: the host's mesh secret keys our links with the other seated peers."""
        mesh = self.mesh
        mesh.mesh_secret = secret
        if mesh.server is not None:
            mesh.server.room_secret = secret

    async def host_connector(
        self, link: SecureLink, addresses: tuple[Endpoint, ...], host: PeerKey
    ) -> None:
        mesh = self.mesh
        delay = mesh.config.redial_min
        while mesh._seated(mesh.me):
            await mesh._run_link(host, link, relayed=False)
            while mesh._seated(mesh.me):
                await trio.sleep(delay)
                delay = min(delay * 2, mesh.config.redial_max)
                assert mesh.roster is not None
                known = mesh.roster.host.addresses
                candidates = known + tuple(a for a in addresses if a not in known)
                try:
                    link, roster = await self.connect_host(candidates, host)
                except JoinRefused as exc:
                    mesh._reject("host", exc)
                    return
                except MeshError as exc:
                    mesh._reject("host", exc)
                    continue
                delay = mesh.config.redial_min
                try:
                    mesh._set_roster(roster, link.label)
                except RosterError as exc:
                    mesh._reject(link.label, exc)
                    await link.aclose()
                    continue
                break
