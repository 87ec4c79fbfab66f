"""Dialing: how a peer opens its links, and the loops that keep them open.

A joiner dials the host (`connect_host`), and after its welcome keeps that link up with
`host_connector`; for every seated peer with a lower seat than ours (not the host) it runs a
`peer_connector`: the direct link first (every address of the peer's roster entry, or a
simultaneous open toward the addresses `Mesh.punch_targets` names), the relay through the
host when none opens, and again with a capped backoff whenever the link dies. A joiner whose
NAT no punch gets through waits instead to be dialed by the host through its own TURN relay
(`Mesh.turn_targets`, turning.py); a host's relayed candidate is tried only after its
others (`RELAY_GRACE`).

The mesh proper (`mesh.py`) owns the links once they are open; this module only opens them.
"""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.channel.errors import LinkError, MeshError, NetError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.channel.link import ConnectError, SecureLink, connect, handshake
from buraco_p2p.net.channel.outbox import LinkRun
from buraco_p2p.net.mesh.moved import host_dial_order
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.punch import PunchError, reusable_socket, simultaneous_open
from buraco_p2p.net.table.table import (
    JoinRefused,
    Roster,
    RosterError,
    join_message,
    kinds_for,
    mesh_message,
    parse_welcome,
)

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = ["STAGGER", "Dialer"]

# Between the starts of two connection attempts to the host (RFC 8305 says 250 ms).
STAGGER = 0.25
# A relayed (TURN) candidate starts once every other attempt has ended, or this long after
# the last of them started: a direct, mapped or punched path is preferred where it opens.
RELAY_GRACE = 2.0


class _PortBusy(Exception):
    """Our listening port cannot dial this destination now: dial from any port."""


class Dialer:
    """The dialing side of one mesh: opens links and hands them to `MeshCore.run_link`."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh
        # Called once the host has our join request (the link is up, a person may be
        # deciding): a front end stops telling the joiner how to reach the host.
        self.on_asked: Callable[[], None] | None = None

    def secret_for(self, peer: PeerKey) -> bytes:
        """The host is dialed with the invite's secret, everyone else with the mesh secret."""
        mesh = self.mesh
        return mesh.room_secret if mesh.roster is None or mesh.is_host_key(peer) else (
            mesh.mesh_secret
        )

    async def connect(self, ep: Endpoint, peer: PeerKey) -> SecureLink:
        """A direct link to `peer` at `ep`, keyed by this table's room or mesh secret.

        A joiner listening on every interface dials the host from its listening port, so
        the address the host sees (and passes on for punching, punching.py) is the public
        one of that port; where that port cannot be used it dials from any port.
        """
        mesh = self.mesh
        if ep in mesh.turn_targets:
            return await self.through_our_relay(ep, peer)
        if mesh.punch_port is not None and ep in mesh.punch_targets:
            return await self.punch(ep, peer)
        if (
            not mesh.is_host
            and mesh.listen_wildcard
            and mesh.listen_port is not None
            and (mesh.roster is None or mesh.is_host_key(peer))
        ):
            with contextlib.suppress(_PortBusy):
                return await self._connect_from(mesh.listen_port, ep, peer)
        return await connect(
            ep.host,
            ep.port,
            mesh.identity,
            room_secret=self.secret_for(peer),
            table_id=mesh.table_id,
            expected_peer=peer,
            timeout=mesh.config.direct_timeout,
        )

    async def _connect_from(self, port: int, ep: Endpoint, peer: PeerKey) -> SecureLink:
        """`connect`, from local `port` (shared with our listener); `_PortBusy` if it is taken
        for this destination (a connection to it in TIME-WAIT, say)."""
        mesh = self.mesh
        timeout = mesh.config.direct_timeout
        deadline = trio.current_time() + timeout
        family = socket.AF_INET6 if ep.ip.version == 6 else socket.AF_INET
        try:
            sock = await reusable_socket(family, port)
        except OSError:
            raise _PortBusy from None
        try:
            with trio.fail_after(timeout):
                await sock.connect((ep.host, ep.port))
        except trio.TooSlowError:
            sock.close()
            raise ConnectError(f"cannot connect to {ep}: timed out") from None
        except OSError as exc:
            sock.close()
            if exc.errno in (errno.EADDRNOTAVAIL, errno.EADDRINUSE):
                raise _PortBusy from None
            raise ConnectError(f"cannot connect to {ep}: {exc.strerror or exc}") from exc
        except BaseException:
            sock.close()
            raise
        return await handshake(
            trio.SocketStream(sock), mesh.identity, room_secret=self.secret_for(peer),
            table_id=mesh.table_id, initiator=True, expected_peer=peer,
            timeout=max(0.0, deadline - trio.current_time()), address=str(ep),
        )  # fmt: skip

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
        mesh.punched.add(str(ep))
        return link

    async def through_our_relay(self, ep: Endpoint, peer: PeerKey) -> SecureLink:
        """Joiner: the link to the host at `ep`, which dials us through our TURN relay once
        it has our reply code; we wait for that connection from `ep`'s IP for as long as a
        punch would, then run the handshake as its initiator, as for a punch."""
        mesh = self.mesh
        if ep.ip in mesh.turn_waiting or mesh.turn is None:
            raise ConnectError(f"cannot connect to {ep}: not through our relay now")
        send, receive = trio.open_memory_channel[trio.abc.Stream](1)
        mesh.turn_waiting[ep.ip] = send
        try:
            with trio.move_on_after(mesh.punch_window):
                stream = await receive.receive()
                return await handshake(
                    stream, mesh.identity, room_secret=self.secret_for(peer),
                    table_id=mesh.table_id, initiator=True, expected_peer=peer,
                    timeout=mesh.config.handshake_timeout,
                )  # fmt: skip
            raise ConnectError(f"{ep} did not dial us through our relay")
        finally:
            del mesh.turn_waiting[ep.ip]
            send.close()

    async def dial_direct(self, key: PeerKey) -> SecureLink | None:
        mesh = self.mesh
        if mesh.direct_refused(key) or mesh.roster is None:
            return None
        member = mesh.roster.member(key)
        if member is None:
            return None
        # Its relayed (TURN) candidate last: a direct path is preferred wherever one works.
        relayed = member.relayed()
        order = [ep for ep in member.addresses if ep not in relayed] + list(relayed)
        for ep in order:
            if mesh.is_direct(key):
                return None  # a direct link came up meanwhile (a punch the host timed)
            try:
                link = await self.connect(ep, key)
            except LinkError as exc:
                mesh.reject(str(ep), exc)
                continue
            try:
                await link.send(mesh_message())
            except LinkError as exc:
                mesh.reject(str(ep), exc)
                await link.aclose()
                continue
            return link
        return None

    async def peer_connector(self, key: PeerKey) -> None:
        """Keep the link to a lower seat up. A direct link that opened some other way (a
        punch timed by the host) is left alone while it lives: never replaced by the relay."""
        mesh = self.mesh
        delay = mesh.config.redial_min
        while mesh.wants_link(key):
            await self._while_direct(key)
            link = await self.dial_direct(key) if mesh.wants_link(key) else None
            if link is not None:
                delay = mesh.config.redial_min
                await mesh.run_link(key, link, relayed=False)
            elif mesh.wants_link(key) and self._direct_run(key) is None:
                link = await mesh.relays.dial(key)
                if link is not None and self._direct_run(key) is not None:
                    await link.aclose()
                elif link is not None:
                    delay = mesh.config.redial_min
                    await mesh.relays.run(key, link)
            await trio.sleep(delay)
            delay = min(delay * 2, mesh.config.redial_max)

    def _direct_run(self, key: PeerKey) -> LinkRun | None:
        run = self.mesh.live_run_or_none(key)
        return run if run is not None and not run.relayed else None

    async def _while_direct(self, key: PeerKey) -> None:
        """Wait while a direct link to `key` is live."""
        while (run := self._direct_run(key)) is not None:
            await run.done.wait()

    async def connect_host(self, addresses: tuple[Endpoint, ...], host: PeerKey) -> tuple[
        SecureLink, Roster
    ]:
        mesh = self.mesh
        errors: list[str] = []
        remaining = list(addresses)
        while remaining:
            failed: set[Endpoint] = set()
            won = await self.first_link(remaining, host, errors, failed)
            if won is None:
                break
            ep, link = won
            remaining = [a for a in remaining if a != ep and a not in failed]
            try:
                kinds = kinds_for(mesh.advertised, mesh.candidate_kinds)
                await link.send(join_message(mesh.advertised, kinds))
                if self.on_asked is not None:
                    self.on_asked()
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

    async def first_link(
        self,
        addresses: list[Endpoint],
        peer: PeerKey,
        errors: list[str],
        failed: set[Endpoint],
    ) -> tuple[Endpoint, SecureLink] | None:
        """The first of `addresses` to give a link, tried as in RFC 8305: each starts
        `STAGGER` seconds after the one before, or as soon as that one fails, and the first
        link made ends the others. So a LAN address in an invite that does not answer from
        another home costs a quarter second, not a whole connect timeout."""
        won: list[tuple[Endpoint, SecureLink]] = []
        relayed = CandidateKind.RELAYED
        kinds = self.mesh.candidate_kinds
        order = [a for a in addresses if kinds.get(a) != relayed]
        order += [a for a in addresses if kinds.get(a) == relayed]
        dones: list[trio.Event] = []

        async def attempt(ep: Endpoint, done: trio.Event, scope: trio.CancelScope) -> None:
            try:
                link = await self.connect(ep, peer)
            except LinkError as exc:
                errors.append(str(exc))
                failed.add(ep)
                done.set()
                return
            if won:
                with trio.CancelScope(shield=True):
                    await link.aclose()
                return
            won.append((ep, link))
            scope.cancel()

        async with trio.open_nursery() as nursery:
            for ep in order:
                if kinds.get(ep) == relayed:
                    with trio.move_on_after(RELAY_GRACE):
                        for earlier in dones:
                            await earlier.wait()
                done = trio.Event()
                dones.append(done)
                nursery.start_soon(attempt, ep, done, nursery.cancel_scope)
                with trio.move_on_after(STAGGER):
                    await done.wait()
        return won[0] if won else None

    async def _connect_host_until_news(
        self, candidates: tuple[Endpoint, ...], host: PeerKey
    ) -> tuple[SecureLink, Roster] | None:
        """`connect_host`, given up (None) when the host's new addresses arrive meanwhile: a
        punch toward a reflexive address lasts as long as a person may take to paste our
        reply code, and one toward the address the host had before it moved would keep a
        pasted re-join code waiting that long (2.15)."""
        news = self.mesh.moves.next_news()
        got: list[tuple[SecureLink, Roster]] = []
        try:
            async with trio.open_nursery() as nursery:

                async def give_up_on_news() -> None:
                    await news.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(give_up_on_news)
                got.append(await self.connect_host(candidates, host))
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # connect_host's own error, as it raised it
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        return got[0] if got else None

    async def _while_host_linked(self, host: PeerKey) -> None:
        """Wait while a link to the host lives that the host opened (after it moved, 2.15)."""
        while (run := self.mesh.live_run_or_none(host)) is not None:
            await run.done.wait()

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
        while mesh.wants_link(mesh.me):
            await mesh.run_link(host, link, relayed=False)
            while mesh.wants_link(mesh.me):
                await self._while_host_linked(host)
                await mesh.moves.wait_news(delay)
                delay = min(delay * 2, mesh.config.redial_max)
                assert mesh.roster is not None
                candidates = host_dial_order(
                    mesh.moves.host_addresses, mesh.roster.host.addresses, addresses
                )
                try:
                    got = await self._connect_host_until_news(candidates, host)
                except JoinRefused as exc:
                    mesh.reject("host", exc)
                    return
                except MeshError as exc:
                    mesh.reject("host", exc)
                    continue
                if got is None:
                    delay = mesh.config.redial_min  # the host moved: dial its new addresses
                    continue
                link, roster = got
                delay = mesh.config.redial_min
                try:
                    mesh.adopt_roster(roster, link.label)
                except RosterError as exc:
                    mesh.reject(link.label, exc)
                    await link.aclose()
                    continue
                break
