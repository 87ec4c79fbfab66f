"""The lobby: seats shown, chat delivered, host approval by prompt, and the real CLI."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio
from cli_helpers import kill_leftovers, quit_all, read_until
from mesh_helpers import FAST, table_of_four

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import JoinRequest, Mesh
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.appmessages import printable


class Screen:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        self.lines.extend(text.split("\n"))

    async def wait_for(self, needle: str, timeout: float = 5) -> str:
        with trio.fail_after(timeout):
            while True:
                for line in self.lines:
                    if needle in line:
                        return line
                await trio.sleep(0.01)


async def test_chat_reaches_every_lobby_and_control_characters_are_neutralised() -> None:
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        screens = [Screen() for _ in meshes]
        inputs = []
        for mesh, screen in zip(meshes, screens, strict=True):
            send, recv = trio.open_memory_channel[str](8)
            inputs.append(send)
            nursery.start_soon(Lobby(mesh, screen).run, recv)
        await inputs[1].send("boa noite, mesa!")
        await inputs[2].send("evil \x1b[2J\x1b[Hline")
        for i, screen in enumerate(screens):
            if i != 1:
                await screen.wait_for("<bia> boa noite, mesa!")
            if i != 2:
                line = await screen.wait_for("<caio> evil")
                assert "\x1b" not in line
        await inputs[3].send("/who")
        await screens[3].wait_for("seat 4: duda (you)")
        assert any("seat 1: ana" in line for line in screens[3].lines)
        nursery.cancel_scope.cancel()


async def test_a_line_lobby_shows_the_rules_only_its_host_announces() -> None:
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        screen = Screen()
        lobby = Lobby(meshes[1], screen)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        await meshes[2].broadcast(["rules", "us", []])  # not the host: dropped
        await meshes[0].broadcast(["rules", "italian", ["target_score=2500"]])
        await screen.wait_for("the host chose the rules: italian with target_score=2500")
        await meshes[0].broadcast(["chat", "after the rules"])
        await meshes[2].broadcast(["chat", "after mine"])  # a link keeps its order
        await screen.wait_for("after the rules")
        await screen.wait_for("after mine")
        assert not any("rules: us" in line for line in screen.lines)
        assert lobby.backlog == []
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def prompting_host(
    screen: Screen, answer_delay: float = 0.0
) -> AsyncIterator[tuple[Mesh, trio.MemorySendChannel[str], Lobby]]:
    """A host whose lobby asks the person at `screen` about each joiner; `send` is their typing."""
    box: list[Lobby] = []

    async def approve(request: JoinRequest) -> bool:
        return await box[0].approve(request)

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        lobby = Lobby(host, screen)
        lobby.answer_delay = answer_delay
        box.append(lobby)
        async with trio.open_nursery() as nursery:
            send, recv = trio.open_memory_channel[str](8)
            nursery.start_soon(lobby.run, recv)
            yield host, send, lobby
            nursery.cancel_scope.cancel()


async def _ask_and_give_up(host: Mesh, screen: Screen, joiner: Identity, number: int) -> None:
    """`joiner` asks to join, its prompt (number `number`) shows, then it hangs up."""

    async def join() -> None:
        async with join_table(joiner, host.invite, config=FAST):
            raise AssertionError("seated without an answer")  # pragma: no cover

    async with trio.open_nursery() as nursery:
        nursery.start_soon(join)
        await screen.wait_for(f"join request #{number}: ")
        nursery.cancel_scope.cancel()
    await screen.wait_for(f"join request #{number} from bia")


async def test_host_prompt_is_withdrawn_when_the_joiner_gives_up() -> None:
    screen = Screen()
    async with prompting_host(screen) as (host, send, _):
        bia = Identity.generate("bia")
        await _ask_and_give_up(host, screen, bia, 1)
        line = await screen.wait_for("is withdrawn")
        assert bia.public.fingerprint() in line
        await send.send("y")  # too late: it answers nothing, and it is not chat either
        await screen.wait_for("no join request is waiting for an answer")
        assert not any("<ana> y" in line for line in screen.lines)
        assert host.roster is not None and len(host.roster.members) == 1


async def test_a_renewed_request_does_not_collect_the_answer_meant_for_the_old_one() -> None:
    screen = Screen()
    async with (
        prompting_host(screen, answer_delay=60.0) as (host, send, lobby),
        trio.open_nursery() as nursery,
    ):
        bia = Identity.generate("bia")
        await _ask_and_give_up(host, screen, bia, 1)
        seated = trio.Event()

        async def join_again() -> None:
            async with join_table(bia, host.invite, config=FAST) as b:
                assert b.roster is not None and b.roster.member(b.me) is not None
                seated.set()
                await trio.sleep_forever()

        nursery.start_soon(join_again)
        prompt = await screen.wait_for("join request #2: ")
        assert bia.public.fingerprint() in prompt  # the prompt names the key, not only a nick
        await send.send("y")  # typed for request #1: it must not seat request #2
        await screen.wait_for("join request #2 has only just been shown")
        assert host.roster is not None and len(host.roster.members) == 1
        lobby.answer_delay = 0.0  # the host has now read the prompt
        await send.send("y")
        with trio.fail_after(5):
            await seated.wait()
        nursery.cancel_scope.cancel()


async def test_only_y_or_n_answer_a_prompt_and_other_lines_are_chat() -> None:
    screen = Screen()
    async with prompting_host(screen) as (host, send, _), trio.open_nursery() as nursery:

        async def answer() -> None:
            await screen.wait_for("join request #1: ")
            await send.send("yes please")  # not an answer: chat, and the question stays open
            await screen.wait_for("<ana> yes please")
            assert host.roster is not None and len(host.roster.members) == 1
            await send.send("Y")

        nursery.start_soon(answer)
        async with join_table(Identity.generate("bia"), host.invite, config=FAST) as b:
            assert b.roster is not None and len(b.roster.members) == 2
            await screen.wait_for("seated (2/4)")


async def test_host_prompt_seats_or_refuses_joiners() -> None:
    screen = Screen()
    async with prompting_host(screen) as (host, send, _), trio.open_nursery() as nursery:

        async def answer(text: str) -> None:
            await screen.wait_for("asks to join")
            screen.lines.clear()
            await send.send(text)

        nursery.start_soon(answer, "y")
        async with join_table(Identity.generate("bia"), host.invite, config=FAST) as b:
            assert b.roster is not None and len(b.roster.members) == 2
            await screen.wait_for("seated (2/4)")
        nursery.cancel_scope.cancel()


def test_printable_strips_terminal_controls() -> None:
    assert printable("a\x1b[31mb\nc\u202ed") == "a\ufffd[31mb\ufffdc\ufffdd"
    assert len(printable("x" * 10_000)) == 500


async def test_cli_host_and_three_joiners_chat(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    base = [sys.executable, "-m", "buraco_p2p"]

    def cmd(args: list[str], nick: str) -> list[str]:
        return [
            *base,
            *args,
            "--nick",
            nick,
            "--listen",
            "127.0.0.1",
            "--config-dir",
            str(tmp_path / nick),
        ]

    procs: list[trio.Process] = []
    bufs: list[list[bytes]] = []
    try:
        host = await trio.lowlevel.open_process(
            cmd(["host", "--auto-approve"], "ana"), stdin=-1, stdout=-1, env=env
        )
        procs.append(host)
        bufs.append([])
        text = await read_until(host, bufs[0], b"\nBRC-", 20)
        await read_until(host, bufs[0], b"\n", 5)
        code = next(
            line for line in b"".join(bufs[0]).decode().splitlines() if line.startswith("BRC-")
        )
        assert text
        for nick in ("bia", "caio", "duda"):
            proc = await trio.lowlevel.open_process(
                cmd(["join", code], nick), stdin=-1, stdout=-1, env=env
            )
            procs.append(proc)
            bufs.append([])
        for proc, buf in zip(procs, bufs, strict=True):
            await read_until(proc, buf, b"table is complete", 30)
        assert procs[2].stdin is not None
        await procs[2].stdin.send_all(b"oi pessoal\n")
        for i, (proc, buf) in enumerate(zip(procs, bufs, strict=True)):
            if i != 2:
                await read_until(proc, buf, b"<caio> oi pessoal", 10)
        await quit_all(procs)
    finally:
        await kill_leftovers(procs)


def test_cli_join_with_a_mistyped_code_says_why(tmp_path: Path) -> None:
    import subprocess

    from buraco_p2p.net.reach.invite import Endpoint, Invite

    good = Invite(
        bytes(16), bytes(16), Identity.generate("x").public.raw, (Endpoint.parse("127.0.0.1", 9),)
    ).to_text()
    typo = good[:-3] + ("A" if good[-3] != "A" else "B") + good[-2:]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "buraco_p2p",
            "join",
            typo,
            "--listen",
            "127.0.0.1",
            "--config-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1
    assert "checksum" in result.stderr


async def test_the_host_frees_a_seat_by_its_number_and_every_lobby_shows_it() -> None:
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        screens = [Screen() for _ in meshes]
        inputs = []
        for mesh, screen in zip(meshes, screens, strict=True):
            send, recv = trio.open_memory_channel[str](8)
            inputs.append(send)
            nursery.start_soon(Lobby(mesh, screen).run, recv)
        await inputs[1].send("/kick 3")  # not the host: refused, nothing changes
        await screens[1].wait_for("only the host can free a seat")
        await inputs[0].send("/kick 1")  # the host's own seat
        await screens[0].wait_for("/kick takes the number of another player's seat")
        await inputs[0].send("/kick 3")
        for i in (0, 1, 3):
            line = await screens[i].wait_for("was removed by the host: seat 3 is free")
            assert "caio" in line
        await screens[2].wait_for("you (")
        assert meshes[0].roster is not None and meshes[0].roster.member(meshes[2].me) is None
        nursery.cancel_scope.cancel()
