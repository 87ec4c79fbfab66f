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

from buraco_p2p.net.candidates import CandidateKind
from buraco_p2p.net.invite import Endpoint, Invite
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
