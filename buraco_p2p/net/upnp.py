"""Opt-in UPnP port mapping (`buraco-p2p host --upnp`), so joiners from the internet can dial in.

UPnP discovery sends multicast on the real network, so nothing here runs unless the user
asks for it, and the library (`miniupnpc`, the `upnp` extra) is imported only then. Its
calls block, so they run in a worker thread.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import trio

from buraco_p2p.net.errors import NetError
from buraco_p2p.net.invite import Endpoint, InviteError

DESCRIPTION = "buraco-p2p table"


class UpnpError(NetError):
    """The router could not be found or refused the mapping."""


class UpnpUnavailable(UpnpError):
    """The UPnP library is not installed."""


@dataclass(frozen=True)
class PortMapping:
    external: Endpoint  # what to put in the invite
    internal_port: int
    lan_address: str


def _library() -> Any:
    try:
        return importlib.import_module("miniupnpc")
    except ImportError as exc:
        raise UpnpUnavailable(
            "UPnP needs the miniupnpc package: pip install 'buraco-p2p[upnp]'"
        ) from exc


def _map_blocking(port: int, discover_ms: int, description: str) -> tuple[Any, PortMapping]:
    lib = _library()
    client = lib.UPnP()
    client.discoverdelay = discover_ms
    try:
        found = client.discover()
    except Exception:  # nothing answered: the binding raises with the text "Success"
        found = 0
    if not found:
        raise UpnpError("no UPnP device answered on the local network")
    try:
        client.selectigd()
    except Exception as exc:  # the binding raises bare Exception
        raise UpnpError(
            f"{found} UPnP device(s) answered, none of them an internet gateway ({exc})"
        ) from exc
    try:
        external_ip = client.externalipaddress()
        lan = client.lanaddr
        external_port = port
        ok = client.addportmapping(port, "TCP", lan, port, description, "")
        if not ok:
            external_port = int(client.addanyportmapping(port, "TCP", lan, port, description, ""))
    except UpnpError:
        raise
    except Exception as exc:  # miniupnpc raises bare Exception with the router's message
        why = str(exc) if str(exc) not in ("", "Success") else "it gave no reason"
        raise UpnpError(f"the router refused the UPnP port mapping: {why}") from exc
    try:
        external = Endpoint.parse(str(external_ip), external_port)
    except InviteError as exc:
        raise UpnpError(f"the router reported an unusable external address: {exc}") from exc
    return client, PortMapping(external, port, str(lan))


def _unmap_blocking(client: Any, mapping: PortMapping) -> None:
    with contextlib.suppress(Exception):
        client.deleteportmapping(mapping.external.port, "TCP")


@contextlib.asynccontextmanager
async def upnp_mapping(
    port: int, *, discover_ms: int = 2000, description: str = DESCRIPTION
) -> AsyncIterator[PortMapping]:
    """Map TCP `port` on the router for as long as the block runs, then remove the mapping."""
    client, mapping = await trio.to_thread.run_sync(
        _map_blocking, port, discover_ms, description, abandon_on_cancel=True
    )
    try:
        yield mapping
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await trio.to_thread.run_sync(_unmap_blocking, client, mapping)
