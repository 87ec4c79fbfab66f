"""Four peers on four virtual hosts (network namespaces), finding the table over mDNS.

The namespaces, veth pairs and bridge are created by the test and removed afterwards, so
mDNS multicast never leaves them. Needs root and `ip netns`; skipped with the reason
otherwise. Also here: the DNS-SD TXT record format, which needs no network at all.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from cli_helpers import kill_leftovers, quit_all, read_until

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.reach.discovery import DiscoveryError, parse_txt, txt_record
from buraco_p2p.net.reach.invite import Endpoint, Invite

SUBNET = "10.77.{n}.{host}"


def _invite(n_addresses: int) -> Invite:
    host = Identity.generate("ana")
    addresses = tuple(Endpoint.parse(f"10.0.0.{k + 1}", 47000 + k) for k in range(n_addresses))
    return Invite(secrets.token_bytes(16), secrets.token_bytes(16), host.public.raw, addresses)


def _props(record: dict[str, str]) -> dict[bytes, bytes | None]:
    return {k.encode(): v.encode() for k, v in record.items()}


def test_txt_record_round_trips_and_fits_a_dns_string() -> None:
    invite = _invite(16)
    record = txt_record(invite, "ana", 2)
    assert all(len(k) + 1 + len(v.encode()) <= 256 for k, v in record.items())
    table = parse_txt("ana-x", _props(record))
    assert table.host_nickname == "ana" and table.seats_taken == 2
    assert table.invite.room_secret == invite.room_secret
    assert 0 < len(table.invite.addresses) < 16
    assert table.invite.addresses == invite.addresses[: len(table.invite.addresses)]


@pytest.mark.parametrize("seats", [2, 3, 4, 6])
def test_the_seat_count_of_any_table_size_round_trips(seats: int) -> None:
    table = parse_txt("ana-x", _props(txt_record(_invite(1), "ana", 1, seats)))
    assert (table.seats_taken, table.seats) == (1, seats)


@pytest.mark.parametrize("text", ["7/4", "1/5", "x/4", "10/6", "3/2", ""])
def test_an_impossible_seat_count_reads_as_an_empty_four_seat_table(text: str) -> None:
    table = parse_txt("ana-x", _props({**txt_record(_invite(1), "ana", 1), "seats": text}))
    assert (table.seats_taken, table.seats) == (0, 4)


def test_bad_announcements_are_rejected() -> None:
    record = txt_record(_invite(1), "ana", 1)
    for key, value in [("v", "9"), ("fp", "aaaa-bbbb"), ("inv", "BRC-XXXX"), ("nick", "\x1b")]:
        with pytest.raises(DiscoveryError):
            parse_txt("x", _props({**record, key: value}))
    with pytest.raises(DiscoveryError, match="lacks"):
        parse_txt("x", _props({k: v for k, v in record.items() if k != "inv"}))
    with pytest.raises(DiscoveryError, match="UTF-8"):
        parse_txt("x", {**_props(record), b"nick": b"\xff"})


def _netns_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    if shutil.which("ip") is None:
        return "the `ip` tool (iproute2) is not installed"
    probe = f"bp-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` does not work here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@pytest.fixture
def four_hosts() -> Iterator[list[tuple[str, str]]]:
    """Four namespaces on one bridge: [(namespace, address)]; all removed afterwards."""
    reason = _netns_unavailable()
    if reason:
        pytest.skip(reason)
    tag = secrets.token_hex(3)
    net = secrets.randbelow(200) + 20
    switch = f"bp-{tag}-sw"
    created: list[str] = []
    hosts: list[tuple[str, str]] = []
    try:
        _ip("netns", "add", switch)
        created.append(switch)
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for i in range(4):
            ns = f"bp-{tag}-{i}"
            _ip("netns", "add", ns)
            created.append(ns)
            _ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", f"port{i}",
                "netns", switch)
            _ip("-n", switch, "link", "set", f"port{i}", "master", "br0")
            _ip("-n", switch, "link", "set", f"port{i}", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            address = SUBNET.format(n=net, host=i + 1)
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            hosts.append((ns, address))
        yield hosts
    finally:
        for ns in reversed(created):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)



@pytest.mark.netns
async def test_four_virtual_hosts_find_the_table_over_mdns_and_chat(
    four_hosts: list[tuple[str, str]], tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    nicks = ["ana", "bia", "caio", "duda"]

    def command(i: int) -> list[str]:
        ns, address = four_hosts[i]
        role = ["host", "--auto-approve"] if i == 0 else ["join"]
        return ["ip", "netns", "exec", ns, sys.executable, "-m", "buraco_p2p", *role, "--lan",
                "--listen", address, "--nick", nicks[i], "--config-dir", str(tmp_path / nicks[i])]

    procs: list[trio.Process] = []
    bufs: list[list[bytes]] = [[] for _ in nicks]
    try:
        procs.append(await trio.lowlevel.open_process(command(0), stdin=-1, stdout=-1, env=env))
        await read_until(procs[0], bufs[0], b"announced on the local network", 20)
        procs.append(await trio.lowlevel.open_process(command(1), stdin=-1, stdout=-1, env=env))
        await read_until(procs[1], bufs[1], b"seated (2/4)", 20)
        for i in (2, 3):
            procs.append(await trio.lowlevel.open_process(command(i), stdin=-1, stdout=-1, env=env))
        for i, proc in enumerate(procs):
            await read_until(proc, bufs[i], b"table is complete", 40)
        for i in (1, 2, 3):
            output = b"".join(bufs[i]).decode()
            assert "looking for tables on the local network" in output
            assert "1. ana (" in output  # found over mDNS, not from a pasted code
        assert "1/4 seated" in b"".join(bufs[1]).decode()
        # caio browsed after bia was seated (duda may have been seated too by then): the
        # announcement followed the seat count.
        listing = b"".join(bufs[2]).decode()
        assert "2/4 seated" in listing or "3/4 seated" in listing, listing
        host_address = four_hosts[0][1]
        assert host_address.encode() not in b"".join(bufs[1])  # nobody was told the address
        assert procs[3].stdin is not None
        await procs[3].stdin.send_all(b"ola do outro lado\n")
        for i in (0, 1, 2):
            await read_until(procs[i], bufs[i], b"<duda> ola do outro lado", 10)
        await quit_all(procs)
    finally:
        await kill_leftovers(procs)


async def test_upnp_without_its_library_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from buraco_p2p.net.reach import upnp

    monkeypatch.setitem(sys.modules, "miniupnpc", None)  # import now raises ImportError
    with pytest.raises(upnp.UpnpUnavailable, match=r"buraco-p2p\[upnp\]"):
        async with upnp.upnp_mapping(47000):
            pass
