"""The accepting side of a mesh: its listening sockets and where each accepted link goes.

Every peer listens (the host for joiners, every seat for the peers that dial it). A link
that arrives is either a short-code fetch of the invite (host only), a joiner or a returning
seat for the door (`admission.py`), or a seated peer's link, which must come from a higher
seat and is then run like any other (`MeshCore.run_link`).

This is separate from the mesh proper because it is the one place untrusted connections
enter: whatever an accepted link provokes ends that link only and is remembered in
`Mesh.rejections`, while a listener that fails ends the whole mesh, since a table that no
longer listens must not look alive.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.link import SecureLink
from buraco_p2p.net.channel.server import LinkServer
from buraco_p2p.net.reach.punch import share_listening_port
from buraco_p2p.net.reach.shortcode import send_invite
from buraco_p2p.net.table.table import TableError

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = ["Acceptor", "describe", "leaves"]


class Acceptor:
    """The listening side of one mesh: opens its listeners and sorts the links they accept."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh

    async def accept_peer_link(self, link: SecureLink) -> None:
        """A link whose greeting says it comes from a seated peer (the door checked that)."""
        mesh = self.mesh
        key = link.peer
        member = mesh.roster.member(key) if mesh.roster else None
        if member is None or key == mesh.me:
            mesh.reject(link.label, TableError("is not seated at this table"))
            return
        if mesh.seat_of(key) < mesh.seat_of(mesh.me) and not mesh.is_host_key(key):
            # The higher seat dials; only a host that moved dials its joiners back (2.15).
            mesh.reject(link.label, TableError("dialed a higher seat (the higher seat dials)"))
            return
        if mesh.direct_refused(key):
            mesh.reject(link.label, TableError("direct link refused by the test hook"))
            return
        await mesh.run_link(key, link, relayed=False)

    async def serve(
        self, listen_host: str, port: int, *, task_status: trio.TaskStatus[int]
    ) -> None:
        """Listen on `listen_host` and `port` (0: any) and report the port bound."""
        mesh = self.mesh
        if listen_host == "":
            # Every interface, IPv4 and IPv6, on one port number so one invite entry per address.
            listeners = await trio.open_tcp_listeners(port, host="0.0.0.0")
            same_port = listeners[0].socket.getsockname()[1]
            with contextlib.suppress(OSError):
                listeners += await trio.open_tcp_listeners(same_port, host="::")
        else:
            listeners = await trio.open_tcp_listeners(port, host=listen_host)
        mesh.server = LinkServer(
            mesh.identity,
            self._handle_accepted,
            room_secret=mesh.room_secret if mesh.is_host else mesh.mesh_secret,
            retired_secrets=mesh.retired_secrets if mesh.is_host else (),
            table_id=mesh.table_id,
            handshake_timeout=mesh.config.handshake_timeout,
            is_member=mesh.door.is_member,
            on_error=mesh.reject,
        )
        mesh.server.accept_short = mesh.is_host
        mesh.server.divert = mesh.punches.claim_accepted
        mesh.listeners = listeners
        bound = listeners[0].socket.getsockname()[1]
        share_listening_port(listeners)
        mesh.listen_port = bound
        mesh.listen_wildcard = listen_host in ("", "0.0.0.0", "::")
        await mesh.nursery.start(self._listen, mesh.server, listeners)
        task_status.started(bound)

    async def _handle_accepted(self, link: SecureLink) -> None:
        """One accepted link, start to end: whatever it provokes ends that link only."""
        mesh = self.mesh
        try:
            if link.short and link.retired_secret:  # a replaced invite's short code
                mesh.reject(link.label, TableError("fetched an invite with a replaced short code"))
                return
            if link.short:  # only a host accepts these: the joiner fetches the invite
                await send_invite(link, mesh.invite)
                return
            await mesh.door.handle_link(link)
        except Exception as exc:
            mesh.reject(link.label, MeshError(f"{link.label}: {describe(exc)}"))

    async def _listen(
        self,
        server: LinkServer,
        listeners: list[trio.SocketListener],
        *,
        task_status: trio.TaskStatus[None],
    ) -> None:
        """Serve until cancelled. A listener that fails ends the whole mesh with a
        `MeshError`: a table that no longer listens must not look alive."""
        try:
            await server.serve(listeners, task_status=task_status)
        except Exception as exc:
            raise MeshError(f"stopped listening for peers: {describe(exc)}") from None


def describe(exc: BaseException) -> str:
    """One line for an exception, or for the first error inside an exception group."""
    if isinstance(exc, BaseExceptionGroup):
        found = leaves(exc)
        exc = found[0] if found else exc
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The errors inside `group` and the groups nested in it, depth first."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(leaves(exc))
        else:
            out.append(exc)
    return out
