"""A way back for a host whose router renumbered: `resume --internet` asks the router for a
mapping again and prints the invite with it; `join CODE` for a table saved here takes the
code's addresses into the saved invite (same table, host and room secret only), so the
joiner's resume dials the host where it is now. The saved-invite part on a real table
directory; the host part with the real `host --bots` and `resume` in a home of the namespace
lab (tests/net/natlab.py), skipped with the reason where namespaces or nftables are
unavailable."""

from __future__ import annotations

import secrets
import signal
import sys
import threading
from pathlib import Path

import pytest
import trio

from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.play.hostjoin import _adopt_addresses
from buraco_p2p.play.store import TableMeta, TableStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "net"))

from cli_helpers import ENV, kill_leftovers, read_until
from natlab import Lab, portmap_responder, unavailable

REASON = unavailable()
OLD = Endpoint.parse("198.51.100.11", 4520)
NEW = Endpoint.parse("198.51.100.99", 4520)
LAN = Endpoint.parse("10.0.1.2", 4520)


def _saved(root: Path, invite: Invite) -> TableStore:
    store = TableStore.for_table(invite.table_id, root)
    store.path.mkdir(parents=True)
    store.save_meta(TableMeta(invite.to_bytes(), False, 0, 1))
    return store


def test_join_with_a_new_code_takes_its_addresses_into_the_saved_table(tmp_path: Path) -> None:
    saved = Invite(secrets.token_bytes(16), secrets.token_bytes(16), secrets.token_bytes(32),
                   (LAN, OLD), kinds=(0, int(CandidateKind.MAPPED)))  # fmt: skip
    store = _saved(tmp_path, saved)
    fresh = Invite(saved.table_id, saved.room_secret, saved.host_key, (LAN, NEW),
                   kinds=(0, int(CandidateKind.MAPPED)))  # fmt: skip
    _adopt_addresses(tmp_path, fresh)
    now = Invite.from_bytes(store.load_meta().invite)
    assert now.addresses == (LAN, NEW, OLD)
    assert now.room_secret == saved.room_secret and now.host_key == saved.host_key


def test_a_code_of_another_host_or_secret_changes_nothing(tmp_path: Path) -> None:
    saved = Invite(secrets.token_bytes(16), secrets.token_bytes(16), secrets.token_bytes(32),
                   (LAN, OLD))  # fmt: skip
    store = _saved(tmp_path, saved)
    for other in (
        Invite(saved.table_id, secrets.token_bytes(16), saved.host_key, (NEW,)),
        Invite(saved.table_id, saved.room_secret, secrets.token_bytes(32), (NEW,)),
    ):
        _adopt_addresses(tmp_path, other)
        assert Invite.from_bytes(store.load_meta().invite) == saved


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_a_resumed_host_maps_its_port_again_and_prints_the_invite(tmp_path: Path) -> None:
    with Lab() as lab:
        home = lab.add_home()
        stop = threading.Event()
        responder = portmap_responder(home, stop)
        where = ["--config-dir", str(tmp_path / "id"), "--data-dir", str(tmp_path / "data")]

        def command(*args: str) -> list[str]:
            return ["ip", "netns", "exec", home.namespace, sys.executable, "-m", "buraco_p2p",
                    *args, "--line", *where]  # fmt: skip

        async def run() -> str:
            host = await trio.lowlevel.open_process(
                command("host", "--bots", "1", "--players", "2", "--port", "4520"),
                stdin=-1, stdout=-1, env=ENV,
            )  # fmt: skip
            out: list[bytes] = []
            try:
                await read_until(host, out, b"every seat is taken", 90)
                assert host.stdin is not None
                await host.stdin.send_all(b"/ready\n")
                await read_until(host, out, b"(after a crash: buraco-p2p resume", 90)
                text = b"".join(out).decode()
                table = text.split("(after a crash: buraco-p2p resume ", 1)[1].split(",")[0]
                host.send_signal(signal.SIGTERM)
                with trio.fail_after(60):
                    await host.wait()
            finally:
                await kill_leftovers([host])
            again = await trio.lowlevel.open_process(
                command("resume", table, "--internet"), stdin=-1, stdout=-1, env=ENV
            )
            out = []
            try:
                await read_until(again, out, b"joins again with this code", 60)
                await read_until(again, out, b"\nBRC-", 10)
                await read_until(again, out, b"\nshort code", 10)
                again.send_signal(signal.SIGTERM)
                with trio.fail_after(60):
                    await again.wait()
            finally:
                await kill_leftovers([again])
            return b"".join(out).decode()

        try:
            output = trio.run(run)
        finally:
            stop.set()
            responder.join(10)
    assert "port mapped by PCP" in output, output
    code = next(line for line in output.splitlines() if line.startswith("BRC-"))
    invite = Invite.from_text(code)
    mapped = Endpoint.parse(home.public_ip, 4520)
    assert dict(zip(invite.addresses, invite.kinds, strict=True)).get(mapped) \
        == CandidateKind.MAPPED, invite  # fmt: skip


async def test_the_line_console_takes_a_pasted_rejoin_code(tmp_path: Path) -> None:
    """A joiner's running line client reads a pasted `BRJ-` line as the host's new addresses
    (docs/protocol.md 2.15): dialed from then on; a code of another table is refused."""
    from functools import partial
    from typing import Any

    from buraco_p2p.bots.selfplay import resolve_rules
    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.reach.candidates import Candidate
    from buraco_p2p.net.reach.rejoin import RejoinCode
    from buraco_p2p.play.console import console
    from buraco_p2p.play.driver import Driver
    from buraco_p2p.play.node import open_node

    rules = resolve_rules("classic", (), players=2)
    ana, bia = Identity.generate("ana"), Identity.generate("bia")
    invites: list[Invite] = []
    drivers: dict[str, Driver] = {}
    shown: list[str] = []

    async def run(name: str, **kw: Any) -> None:
        identity = ana if name == "ana" else bia
        async with open_node(identity, tmp_path / name, **kw) as driver:
            drivers[name] = driver
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(run, "ana", rules=rules, on_invite=invites.append))
        with trio.fail_after(30):
            while not invites:
                await trio.sleep(0.01)
            nursery.start_soon(partial(run, "bia", invite=invites[0]))
            while len(drivers) < 2:
                await trio.sleep(0.01)
            mesh = drivers["bia"].mesh
            code = RejoinCode((Candidate(CandidateKind.MAPPED, NEW),))
            send, lines = trio.open_memory_channel[str](4)
            nursery.start_soon(console, drivers["bia"], lines, shown.append)
            await send.send(code.to_text(secrets.token_bytes(16), mesh.table_id))
            await send.send("  " + code.to_text(mesh.mesh_secret, mesh.table_id).lower())
            while not any("re-join code accepted" in line for line in shown):
                await trio.sleep(0.01)
        assert any(line.startswith("* re-join code refused: ") for line in shown), shown
        assert any(f"dialing the host at {NEW} ..." in line for line in shown), shown
        assert mesh.moves.host_addresses == (NEW,)
        nursery.cancel_scope.cancel()
