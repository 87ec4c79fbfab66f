"""Host: a plain TCP connection to the relayed address a joiner's TURN server lends it.

Apart from `turning` (which holds the relay and its permissions) so that a part of the mesh
that dials a joiner's relay again (`moving`) needs the mesh's core only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.turnwire import connect_tcp

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = ["dial_relayed"]


async def dial_relayed(
    mesh: MeshCore, ep: Endpoint, window: float
) -> trio.SocketStream | None:
    """Host: a plain TCP connection to a joiner's relayed address `ep`, tried for `window`
    seconds (the joiner's permission may come a moment after its code), as a stream whose
    link reads "relayed (TURN ...)"."""
    deadline = trio.current_time() + window
    while True:
        try:
            with trio.fail_after(max(0.1, deadline - trio.current_time())):
                sock = await connect_tcp(ep)
        except (OSError, trio.TooSlowError):
            if trio.current_time() >= deadline:
                return None
            await trio.sleep(0.5)
            continue
        mesh.turn_addresses[str(ep)] = ep.ip
        return sock
