"""Opt-in LAN discovery over mDNS/DNS-SD (`host --lan`, `join --lan`), with `zeroconf`.

mDNS is multicast on the real network, so it never runs unless the user asks for it.
A LAN announcement carries the table's invite (with its LAN addresses only): choosing
`--lan` means anyone on the local network may *ask* to join; the host still approves
each joiner by name and fingerprint, exactly as for a pasted invite.

Service type `_buraco-p2p._tcp.local.`; TXT record keys (all ASCII):

    v     "1"                         announcement format version
    tid   hex of the 16-byte table id
    fp    host identity fingerprint (as shown to people)
    nick  host nickname (UTF-8)
    seats "<taken>/<seats>"            seats taken of the table's seat count (2, 3, 4 or 6)
    inv   the invite code text (BRC-...)

zeroconf's blocking API runs in worker threads so the trio side never blocks.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import trio

from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import PeerKey, validate_nickname
from buraco_p2p.net.reach.invite import Invite, InviteError

SERVICE_TYPE = "_buraco-p2p._tcp.local."
TXT_VERSION = "1"
SEAT_COUNTS = "2346"
MAX_TXT_VALUE = 255


class DiscoveryError(NetError):
    """mDNS could not be used, or an announcement was unusable."""


@dataclass(frozen=True)
class LanTable:
    """A table seen on the LAN."""

    name: str
    host_nickname: str
    host_fingerprint: str
    seats_taken: int
    invite: Invite
    seats: int = 4


def txt_record(invite: Invite, nickname: str, seats_taken: int, seats: int = 4) -> dict[str, str]:
    """The TXT properties announcing `invite`; addresses are dropped until the code fits."""
    addresses = invite.addresses
    while True:
        code = Invite(invite.table_id, invite.room_secret, invite.host_key, addresses).to_text()
        if len(code) + 4 <= MAX_TXT_VALUE or not addresses:
            break
        addresses = addresses[:-1]
    return {
        "v": TXT_VERSION,
        "tid": invite.table_id.hex(),
        "fp": PeerKey(invite.host_key).fingerprint(),
        "nick": nickname,
        "seats": f"{seats_taken}/{seats}",
        "inv": code,
    }


def parse_txt(name: str, properties: dict[bytes, bytes | None]) -> LanTable:
    """Validate a TXT record from the LAN (anyone can announce anything there)."""

    def get(key: str) -> str:
        value = properties.get(key.encode())
        if value is None:
            raise DiscoveryError(f"LAN announcement {name!r} lacks {key!r}")
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DiscoveryError(f"LAN announcement {name!r} has a non-UTF-8 {key!r}") from exc

    if get("v") != TXT_VERSION:
        raise DiscoveryError(f"LAN announcement {name!r} uses an unknown format")
    try:
        invite = Invite.from_text(get("inv"))
        nickname = validate_nickname(get("nick"))
    except (InviteError, ValueError) as exc:
        raise DiscoveryError(f"LAN announcement {name!r}: {exc}") from exc
    fingerprint = PeerKey(invite.host_key).fingerprint()
    if get("fp") != fingerprint or get("tid") != invite.table_id.hex():
        raise DiscoveryError(f"LAN announcement {name!r} contradicts its own invite")
    taken, seats = _seat_count(get("seats"))
    return LanTable(name, nickname, fingerprint, taken, invite, seats)


def _seat_count(text: str) -> tuple[int, int]:
    """`<taken>/<seats>`, one digit each; anything else reads as an empty four-seat table
    (the count is only shown, never trusted: the host's roster is what seats people)."""
    if len(text) == 3 and text[1] == "/" and text[2] in SEAT_COUNTS and text[0].isdigit():
        taken, seats = int(text[0]), int(text[2])
        if taken <= seats:
            return taken, seats
    return 0, 4


def _zeroconf() -> Any:
    try:
        import zeroconf
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise DiscoveryError("LAN discovery needs the zeroconf package") from exc
    return zeroconf


def _service_info(
    invite: Invite, nickname: str, seats_taken: int, port: int, seats: int = 4
) -> Any:
    zc = _zeroconf()
    instance = f"{nickname}-{invite.table_id.hex()[:8]}"
    safe = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in instance)[:60]
    addresses = [ep.ip.packed for ep in invite.addresses]
    return zc.ServiceInfo(
        SERVICE_TYPE,
        f"{safe}.{SERVICE_TYPE}",
        addresses=addresses,
        port=port,
        properties=txt_record(invite, nickname, seats_taken, seats),
        server=f"{safe}.local.",
    )


class Announcement:
    """A live LAN announcement; `update` refreshes the seat count other players see."""

    def __init__(
        self, conf: Any, info: Any, invite: Invite, nickname: str, port: int, seats: int = 4
    ) -> None:
        self._conf = conf
        self._info = info
        self._invite = invite
        self._nickname = nickname
        self._port = port
        self._seats = seats

    async def update(self, seats_taken: int) -> None:
        info = _service_info(self._invite, self._nickname, seats_taken, self._port, self._seats)
        info.name = self._info.name  # keep the name zeroconf settled on at registration
        await trio.to_thread.run_sync(self._conf.update_service, info)
        self._info = info

    def _stop(self) -> None:
        with contextlib.suppress(Exception):
            self._conf.unregister_service(self._info)
        self._conf.close()


@contextlib.asynccontextmanager
async def announce_table(
    invite: Invite, nickname: str, port: int, seats_taken: int = 1, seats: int = 4
) -> AsyncIterator[Announcement]:
    """Announce the table of `seats` seats on the LAN while the block runs."""
    zc = _zeroconf()
    info = _service_info(invite, nickname, seats_taken, port, seats)

    def start() -> Any:
        conf = zc.Zeroconf()
        try:
            conf.register_service(info, allow_name_change=True)
        except Exception:
            conf.close()
            raise
        return conf

    try:
        conf = await trio.to_thread.run_sync(start)
    except OSError as exc:
        raise DiscoveryError(f"cannot use mDNS on this network: {exc}") from exc
    announcement = Announcement(conf, info, invite, nickname, port, seats)
    try:
        yield announcement
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await trio.to_thread.run_sync(announcement._stop)


async def browse_tables(timeout: float = 3.0) -> list[LanTable]:
    """Tables announced on the LAN within `timeout` seconds (bad announcements are skipped)."""
    zc = _zeroconf()

    def browse() -> list[LanTable]:
        conf = zc.Zeroconf()
        names: set[str] = set()
        lock = threading.Lock()

        def on_change(zeroconf: Any, service_type: str, name: str, state_change: Any) -> None:
            with lock:
                names.add(name)

        try:
            browser = zc.ServiceBrowser(conf, SERVICE_TYPE, handlers=[on_change])
            threading.Event().wait(timeout)
            browser.cancel()
            found: list[LanTable] = []
            with lock:
                seen = sorted(names)
            for name in seen:
                info = conf.get_service_info(SERVICE_TYPE, name, timeout=1000)
                if info is None:
                    continue
                with contextlib.suppress(DiscoveryError):
                    found.append(parse_txt(name, dict(info.properties)))
            return found
        finally:
            conf.close()

    try:
        return await trio.to_thread.run_sync(browse)
    except OSError as exc:
        raise DiscoveryError(f"cannot use mDNS on this network: {exc}") from exc
