"""The real `buraco-p2p host` / `join` commands: one-line errors, EOF, and a patient joiner."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
import trio
from cli_helpers import (
    COMMAND,
    ENV,
    invite_code,
    kill_leftovers,
    read_until,
    start,
    start_line_joiner,
)
from mesh_helpers import FAST

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.table.table import JoinRefused


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args, "--config-dir", str(tmp_path / "me")],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        env=ENV,
    )


def _one_line_usage_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _some_invite() -> str:
    key = Identity.generate("x").public.raw
    return Invite(bytes(16), bytes(16), key, (Endpoint.parse("127.0.0.1", 9),)).to_text()


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["host", "--port", "70000"], ("--port 70000", "0..65535")),
        (["host", "--port", "-1"], ("--port -1", "0..65535")),
        (["host", "--port", "http"], ("--port 'http'", "not a number")),
        (["host", "--listen", "not-an-address"], ("--listen 'not-an-address'", "numeric")),
        (["host", "--listen", "127.0.0.1", "--port", "99999"], ("--port 99999",)),
    ],
)
def test_bad_host_arguments_give_one_line_and_exit_2(
    tmp_path: Path, args: list[str], needles: tuple[str, ...]
) -> None:
    _one_line_usage_error(_run(args, tmp_path), *needles)


def test_bad_join_port_gives_one_line_and_exit_2(tmp_path: Path) -> None:
    result = _run(["join", _some_invite(), "--port", "70000"], tmp_path)
    _one_line_usage_error(result, "--port 70000")


def test_a_port_in_use_gives_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run(["host", "--listen", "127.0.0.1", "--port", str(port)], tmp_path)
    _one_line_usage_error(result, f"127.0.0.1:{port}", "in use")


def test_an_address_that_is_not_ours_gives_one_line_and_exit_2(tmp_path: Path) -> None:
    # TEST-NET-1 (RFC 5737): never assigned to this machine, and binding sends nothing.
    result = _run(["host", "--listen", "192.0.2.1", "--port", "4464"], tmp_path)
    _one_line_usage_error(result, "192.0.2.1:4464", "not one of this machine's")


async def test_the_host_stays_at_its_table_when_its_input_ends(tmp_path: Path) -> None:
    args = ["host", "--auto-approve", "--listen", "127.0.0.1", "--nick", "ana"]
    host = await start(args, tmp_path / "ana", stdin=subprocess.DEVNULL)
    buf: list[bytes] = []
    try:
        await read_until(host, buf, b"input closed", 20)
        code = invite_code(buf)
        # Its input is gone, and still it seats a joiner and keeps running.
        async with join_table(Identity.generate("bia"), Invite.from_text(code), config=FAST) as b:
            assert b.roster is not None and len(b.roster.members) == 2
        await read_until(host, buf, b"seated (2/4)", 10)
        assert host.returncode is None
    finally:
        await kill_leftovers([host])


async def test_a_host_without_input_declines_join_requests_at_once(tmp_path: Path) -> None:
    args = ["host", "--listen", "127.0.0.1", "--nick", "ana"]
    host = await start(args, tmp_path / "ana", stdin=subprocess.DEVNULL)
    buf: list[bytes] = []
    try:
        await read_until(host, buf, b"input closed", 20)
        code = invite_code(buf)
        with trio.fail_after(10), pytest.raises(JoinRefused, match="declined"):
            async with join_table(Identity.generate("bia"), Invite.from_text(code), config=FAST):
                raise AssertionError("seated with nobody to approve")  # pragma: no cover
        await read_until(host, buf, b"no input to ask", 10)
        assert host.returncode is None
    finally:
        await kill_leftovers([host])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_join_keeps_trying_until_the_host_answers(tmp_path: Path) -> None:
    ana = Identity.generate("ana")
    table_id, room = os.urandom(16), os.urandom(16)
    port = _free_port()
    code = Invite(table_id, room, ana.public.raw, (Endpoint.parse("127.0.0.1", port),)).to_text()
    joiner = await start_line_joiner(code, tmp_path)
    buf: list[bytes] = []
    try:
        # Nobody listens yet: the joiner says so and waits, it does not exit.
        await read_until(joiner, buf, b"trying again in 1 s", 20)
        await read_until(joiner, buf, b"trying again in 2 s", 20)
        assert joiner.returncode is None
        async with host_table(
            ana,
            listen_host="127.0.0.1",
            port=port,
            table_id=table_id,
            room_secret=room,
            config=FAST,
        ) as host:
            await read_until(joiner, buf, b"seated (2/4)", 30)
            assert host.roster is not None and len(host.roster.members) == 2
            assert joiner.stdin is not None
            await joiner.stdin.send_all(b"/quit\n")
            with trio.fail_after(15):
                assert await joiner.wait() == 0
    finally:
        await kill_leftovers([joiner])


async def test_running_out_of_descriptors_is_one_warning_and_the_host_recovers(
    tmp_path: Path,
) -> None:
    import resource

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))

    args = ["host", "--auto-approve", "--listen", "127.0.0.1", "--nick", "ana"]
    host = await start(args, tmp_path / "ana", preexec_fn=few_descriptors)
    buf: list[bytes] = []
    flood: list[trio.SocketStream] = []
    try:
        await read_until(host, buf, b"\nBRC-", 20)
        await read_until(host, buf, b"\n", 5)
        code = invite_code(buf)
        port = Invite.from_text(code).addresses[0].port
        # Eight half-open handshakes from each of twelve addresses: more than 48 descriptors.
        for n in range(12):
            for _ in range(8):
                flood.append(
                    await trio.open_tcp_stream("127.0.0.1", port, local_address=f"127.0.1.{n + 1}")
                )
        assert host.stderr is not None
        err: list[bytes] = []
        with trio.fail_after(20):
            while b"out of file descriptors" not in b"".join(err):
                err.append(bytes(await host.stderr.receive_some(65536)))
        for stream in flood:
            await stream.aclose()
        async with join_table(Identity.generate("bia"), Invite.from_text(code), config=FAST) as b:
            assert b.roster is not None and len(b.roster.members) == 2
        with trio.move_on_after(1):
            while True:
                chunk = await host.stderr.receive_some(65536)
                if not chunk:
                    break
                err.append(bytes(chunk))
        text = b"".join(err).decode()
        assert "Traceback" not in text, text
        warnings = [line for line in text.splitlines() if "out of file descriptors" in line]
        assert len(warnings) == 1, text
        assert len(text.splitlines()) <= 2, text  # the warning, and "accepting again"
    finally:
        for stream in flood:
            await stream.aclose()
        await kill_leftovers([host])
