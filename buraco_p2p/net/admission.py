"""Table admission: the greeting on every accepted link, and seating joiners at the host.

Every link a peer accepts starts with a greeting. A `mesh` greeting comes from a seated
peer and is handed to the mesh; a `join` greeting is a request for a seat and only the host
takes it: a returning identity gets its seat back at once, a new one waits for the host's
`approve` callback (one question at a time), and the new roster goes to everyone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.errors import LinkError, MeshError, NetError
from buraco_p2p.net.identity import PeerKey
from buraco_p2p.net.invite import Endpoint
from buraco_p2p.net.link import SecureLink
from buraco_p2p.net.table import (
    HELLO_JOIN,
    Admission,
    HostTable,
    TableError,
    parse_hello,
    refused_message,
    roster_message,
    welcome_message,
)

if TYPE_CHECKING:
    from buraco_p2p.net.mesh import Mesh

__all__ = ["Approver", "Door", "JoinRequest", "auto_approve"]


@dataclass(frozen=True)
class JoinRequest:
    key: PeerKey
    nickname: str
    addresses: tuple[Endpoint, ...]


Approver = Callable[[JoinRequest], Awaitable[bool]]


async def auto_approve(request: JoinRequest) -> bool:
    """Seat everyone who knows the room secret (scripts, bots, tests)."""
    await trio.lowlevel.checkpoint()
    return True


class Door:
    """Every accepted link passes here first; on the host, `table` seats the joiners."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.table: HostTable | None = None  # the host's seating state; None on a joiner
        self.approve: Approver = auto_approve
        self._approval_lock = trio.Lock()

    async def handle_link(self, link: SecureLink) -> None:
        """Every accepted link: a join (host only) or a mesh link from a seated peer."""
        mesh = self.mesh
        try:
            with trio.fail_after(mesh.config.hello_timeout):
                hello = await link.receive()
            kind, addresses = parse_hello(hello, link.label)
        except (NetError, trio.TooSlowError) as exc:
            mesh._reject(link.label, exc)
            return
        if kind == HELLO_JOIN:
            if not mesh.is_host:
                mesh._reject(link.label, TableError("tried to join at a peer that is not the host"))
                return
            try:
                await self._admit(link, addresses)
            except NetError as exc:  # only this joiner's link is affected
                mesh._reject(link.label, exc)
            return
        await mesh._accept_peer_link(link)

    async def _admit(self, link: SecureLink, addresses: tuple[Endpoint, ...]) -> None:
        mesh = self.mesh
        table = self.table
        assert table is not None
        key, nickname = link.peer, link.peer_nickname
        verdict = table.classify(key)
        if verdict == "member":
            admission = table.readmit(key, nickname, addresses)
            if admission.member is None:
                await link.send(refused_message(admission.reason))
                return
            await link.send(welcome_message(admission.member.seat, table.roster))
        elif verdict == "full":
            await link.send(refused_message("the table is full"))
            mesh._reject(link.label, TableError("tried to join a full table"))
            return
        else:
            async with self._approval_lock:
                if table.classify(key) == "full":
                    ok, left = False, None
                else:
                    ok, left = await self._approve_while_connected(
                        link, JoinRequest(key, nickname, addresses)
                    )
                if left is not None:
                    # Whatever the host answered, nobody is there to take the seat.
                    mesh._reject(
                        link.label,
                        TableError(f"left before the host answered ({left}); seat not given"),
                    )
                    with trio.CancelScope(shield=True):
                        await link.aclose()
                    return
                admission = Admission(None, False)
                if ok:
                    admission = table.seat_new(key, nickname, addresses)
                if admission.member is not None and not admission.returning:
                    mesh._set_roster(table.roster)
                    # The seat stands only if the welcome reaches a live link.
                    try:
                        with trio.fail_after(mesh.config.hello_timeout):
                            await link.send(welcome_message(admission.member.seat, table.roster))
                    except (LinkError, trio.TooSlowError) as exc:
                        if table.vacate(key):
                            mesh._set_roster(table.roster)
                            await self.announce_roster(except_key=key)
                        raise TableError(
                            f"{link.label} could not be welcomed ({exc}); seat not given"
                        ) from None
            if not ok:
                await link.send(refused_message("the host declined"))
                mesh._reject(link.label, TableError("was declined by the host"))
                return
            if admission.member is None:
                await link.send(refused_message(admission.reason))
                return
            if admission.returning:
                await link.send(welcome_message(admission.member.seat, table.roster))
        mesh._set_roster(table.roster)
        await self.announce_roster(except_key=key)
        await mesh._run_link(key, link, relayed=False)

    async def _approve_while_connected(
        self, link: SecureLink, request: JoinRequest
    ) -> tuple[bool, str | None]:
        """The host's answer, and why the joiner is gone if it left (or spoke) meanwhile.

        A joiner says nothing until it is answered, so anything on its link during the
        question (end of stream, an error, a message) means it will not take the seat; the
        question is then withdrawn (the approver is cancelled).
        """
        answer = False
        left: str | None = None

        async def watch(scope: trio.CancelScope) -> None:
            nonlocal left
            try:
                await link.receive()
                left = "it spoke before it was answered"
            except LinkError as exc:
                left = str(exc) or type(exc).__name__
            scope.cancel()

        async def ask(scope: trio.CancelScope) -> None:
            nonlocal answer
            answer = await self.approve(request)
            scope.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch, nursery.cancel_scope)
            nursery.start_soon(ask, nursery.cancel_scope)
        return answer, left

    async def announce_roster(self, except_key: PeerKey) -> None:
        """Host: send the current roster to every seated peer whose link is up."""
        mesh = self.mesh
        assert mesh.roster is not None
        message = roster_message(mesh.roster)
        for peer in mesh.peers():
            if peer != except_key and mesh.is_up(peer):
                with contextlib.suppress(MeshError, LinkError):
                    await mesh._send_raw(peer, message)
