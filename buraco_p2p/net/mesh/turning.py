"""`--turn`: a relayed address from a TURN server the user names, and where its connections go.

A host that nobody can dial (a NAT that gives every destination a new port, and no port
mapping) advertises the relayed address a TURN server lends it (turn.py) as one more
candidate, "relayed", after its others: joiners dial it with plain TCP. A joiner behind such
a NAT, at a host no punch reaches, puts its own relayed address in its reply code, and the
host dials that. Either way the TURN server forwards the bytes of the usual handshake and
frames: it relays ciphertext it can neither read nor forge.

Who may come through (a TURN server forwards only from the IPs the allocation permits,
RFC 6062 section 5.3), each for a reason (docs/protocol.md 2.14):

- the host permits the IP of every candidate of a reply code it accepted (authenticated
  with the room secret, so only an invite holder adds one): that joiner's public address;
- a joiner permits the IPs of the host's candidates that lead outside the host's network
  (the invite's reflexive, mapped and public own addresses): where the host dials from;
- a joiner also permits, as each roster arrives, the IPs of the seated members' roster
  entries that lead outside one network, and those of the candidates a `punch` record names
  for a peer (where the host sees that peer): where another joiner dials its relayed
  candidate from, when no punch gets through.

A connection through our relay reaches the mesh exactly as one accepted on our listening
port (`LinkServer.handle_stream`: handshake, admission limits, the door), except where a
joiner waits to be dialed by the host through it (`Mesh.turn_waiting`, dialing.py): that one
is the joiner's link to the host. A TURN server that refuses us or fails is one line naming
it and the reason; the table goes on with the paths it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.mesh.seating import seated_ips
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import IPAddress
from buraco_p2p.net.reach.turn import TurnError, TurnRelay, TurnServer, open_turn

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.mesh import Mesh

__all__ = ["keep_relay", "permit"]


async def keep_relay(
    mesh: Mesh,
    servers: Sequence[TurnServer],
    say: Callable[[str], None],
    *,
    advertise: bool,
    task_status: trio.TaskStatus[TurnRelay | None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Allocate on the first of `servers` that grants a TCP allocation and serve its peers
    until cancelled (the mesh ends); the allocation is then released. `advertise` (host):
    add the relayed address to the roster entry and the invite; a joiner (not `advertise`)
    lists it last in its join greeting (2.6) and permits the seated members' public IPs as
    rosters arrive. Starts with the relay, or None when no server gave one (each refusal said
    in one line)."""
    for server in servers:
        try:
            async with open_turn(server) as relay:
                assert relay.relayed is not None
                mesh.turn = relay
                mesh.advertise_also(relay.relayed, CandidateKind.RELAYED)
                if not advertise and mesh.roster is not None:
                    relay.want(seated_ips(mesh.roster, mesh.me))
                say(f"* relayed address {relay.relayed} from the {server}, for players who "
                    "cannot reach us any other way")  # fmt: skip
                task_status.started(relay)
                await _serve(mesh, relay, say)
                say(f"* the relay ended: {relay.failure or f'{server} closed it'}; "
                    "the table goes on with the paths it has")  # fmt: skip
                mesh.turn = None
                await trio.sleep_forever()
        except TurnError as exc:
            say(f"* no TURN relay: {exc}")
    task_status.started(None)


async def _serve(mesh: Mesh, relay: TurnRelay, say: Callable[[str], None]) -> None:
    """Hand every connection through `relay` to the mesh, and send the permissions asked for
    (`TurnRelay.want`), until the relay ends."""
    server_ip = relay.server.endpoint.ip
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_permit_wanted, mesh, relay, say)
        await _hand_over(mesh, relay, server_ip, nursery)
        nursery.cancel_scope.cancel()


async def _permit_wanted(mesh: Mesh, relay: TurnRelay, say: Callable[[str], None]) -> None:
    """Permit each IP asked for once: a server that refuses one is said once, not again at
    every roster."""
    tried: set[IPAddress] = set()
    while True:
        await relay.wanted_changed.wait()
        relay.wanted_changed = trio.Event()
        fresh, relay.wanted = relay.wanted - tried, set()
        tried |= fresh
        await permit(mesh, fresh, say)


async def _hand_over(
    mesh: Mesh, relay: TurnRelay, server_ip: IPAddress, nursery: trio.Nursery
) -> None:
    """Each connection through `relay`: to a waiting dial of ours (turn_waiting), else to
    the accept path, as one on our listening port."""
    async for stream in relay.incoming:
        mesh.turn_addresses[str(stream.peer)] = server_ip
        waiting = mesh.turn_waiting.get(stream.peer.ip)
        if waiting is not None:
            try:
                waiting.send_nowait(stream)
                continue
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        if mesh.server is None:
            await trio.aclose_forcefully(stream)
            continue
        nursery.start_soon(mesh.server.handle_stream, stream)


async def permit(mesh: Mesh, ips: Iterable[IPAddress], say: Callable[[str], None]) -> None:
    """Permit `ips` on our relay, if we hold one; a refusal is said and the table goes on."""
    relay = mesh.turn
    if relay is None or relay.closed.is_set():
        return
    try:
        await relay.permit(ips)
    except TurnError as exc:
        say(f"* {exc}")


