"""People at line clients in the namespace lab: the real `host` and `join` driven as a person
plays (drawing, then discarding the first card, each time the client asks for a move), and the
table of tests/net/test_homes_renumber_cli.py and benchmarks/internet.py, whose cone host's
router renumbers mid-hand."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import trio
from cli_helpers import ENV, kill_leftovers
from natlab import Home, Lab, buraco_command, renumber

RENUMBER_AFTER_MOVES = 4  # moves of the host's before its router restarts
# A person reads the re-join code and pastes it this long after it is printed: by then the
# joiner has long noticed its link is gone and is punching toward the host's old address.
PASTE_AFTER = 10.0
# The longest a move may take to show at a seat after the paste before the table counts as
# stuck.
STUCK_AFTER = 45.0
MOVE_WORDS = (" drew ", " discarded ", " took ")


class Player:
    """One person at a line client: what it printed, and its moves made as it is asked."""

    def __init__(self, name: str, proc: trio.Process) -> None:
        self.name, self.proc = name, proc
        self.lines: list[str] = []
        self.stamps: list[float] = []  # when each line was read (trio's clock)
        self.moves = 0
        self.phase = ""
        self.seen = trio.Event()  # set at every new line
        self.paused = False  # a move asked for meanwhile waits for `resume`
        self.asked = False

    async def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.send_all(text.encode() + b"\n")

    async def read(self) -> None:
        """Read its output; play each turn it is asked for (draw, then discard its first)."""
        async for line in lines_of(self.proc):
            self.lines.append(line)
            self.stamps.append(trio.current_time())
            self.seen.set()
            self.seen = trio.Event()
            if line.startswith(f"turn: {self.name} (you), "):
                self.phase = line.split(", ", 1)[1]
            elif line.startswith("your move"):
                self.asked = True
                if not self.paused:
                    await self.play()

    async def play(self) -> None:
        self.asked = False
        self.moves += 1
        await self.type("draw" if self.phase == "draw" else "discard 1")

    async def resume(self) -> None:
        self.paused = False
        if self.asked:
            await self.play()

    async def wait_for(self, text: str, timeout: float, start: int = 0) -> str:
        """The first line from index `start` on that holds `text`."""
        with trio.fail_after(timeout):
            while True:
                found = next((x for x in self.lines[start:] if text in x), None)
                if found is not None:
                    return found
                await self.seen.wait()

    async def first_move(self, timeout: float, start: int) -> float:
        """When the first move (anyone's, ours too) from line `start` on was shown."""
        with trio.fail_after(timeout):
            while True:
                for k in range(start, len(self.lines)):
                    if any(w in self.lines[k] for w in MOVE_WORDS):
                        return self.stamps[k]
                await self.seen.wait()

    def stamp_of(self, line: str, start: int) -> float:
        """When `line` (the first such from index `start` on) was shown."""
        return self.stamps[self.lines.index(line, start)]

    def tail(self) -> str:
        return "\n".join(self.lines[-25:])


async def quiet(*players: Player, still: float = 1.5) -> None:
    """Until none of `players` has printed anything for `still` seconds."""
    with trio.fail_after(60):
        while True:
            counts = [len(p.lines) for p in players]
            await trio.sleep(still)
            if counts == [len(p.lines) for p in players]:
                return


async def lines_of(proc: trio.Process) -> AsyncIterator[str]:
    assert proc.stdout is not None
    pending = b""
    while data := await proc.stdout.receive_some(65536):
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line.decode(errors="replace")


@dataclass(frozen=True)
class Renumbered:
    """When each thing happened after a host's router renumbered, in seconds from then."""

    code_s: float  # the host printed its re-join code
    pasted_s: float  # the code was pasted at the last joiner
    moved_s: float  # the table moved again: a move made since, shown at every seat

    @property
    def after_paste_s(self) -> float:
        """From the paste until the table moved again (the part no person waits out)."""
        return self.moved_s - self.pasted_s


async def renumbered_table(lab: Lab, host: Home, joiners: list[Home], tmp: Path) -> Renumbered:
    """A table of people at line clients (the real `host` and `join` in `host` and `joiners`,
    each behind a cone NAT with no mapping, every reply code pasted at the host) whose host's
    router renumbers mid-hand (`natlab.renumber`), at a moment when nothing is on its way.
    The players go on playing as they are asked; the host's re-join code is pasted once at
    every joiner `PASTE_AFTER` seconds after the host prints it. The table has moved again
    once every seat shows a move made after the renumbering: every peer has applied an entry
    made since (a draw needs every other seat's shares, a discard reaches the others over
    their links)."""
    stun = [a for ep in lab.stun_servers() for a in ("--stun", f"{ep.host}:{ep.port}")]
    rules = ["--players", str(len(joiners) + 1), "--rule", "hands=1"]
    hcmd = buraco_command(host.namespace, tmp / "ana", "host", "--nick", "ana", "--port", "4700",
                          "--auto-approve", *rules, *stun)  # fmt: skip
    procs: list[trio.Process] = []
    try:
        async with trio.open_nursery() as nursery:
            procs.append(await trio.lowlevel.open_process(hcmd, stdin=-1, stdout=-1, env=ENV))
            ana = Player("ana", procs[0])
            nursery.start_soon(ana.read)
            code = (await ana.wait_for("BRC-", 60)).strip()
            others: list[Player] = []
            for n, home in enumerate(joiners):
                nick = ("bia", "caio", "duda")[n]
                jcmd = buraco_command(home.namespace, tmp / nick, "join", code, "--nick", nick,
                                      "--port", str(4710 + n), *stun)  # fmt: skip
                procs.append(await trio.lowlevel.open_process(jcmd, stdin=-1, stdout=-1,
                                                              env=ENV))  # fmt: skip
                others.append(Player(nick, procs[-1]))
                nursery.start_soon(others[-1].read)
                await ana.type((await others[-1].wait_for("BRR-", 60)).strip())
            everyone = [ana, *others]
            for p in everyone:
                await p.wait_for("table is complete", 60)
            for p in everyone:
                await p.type("/ready")
            with trio.fail_after(120):
                while ana.moves < RENUMBER_AFTER_MOVES:
                    await ana.seen.wait()
            # Everyone stops playing, and nothing more is on its way; then the router restarts,
            # and everyone plays on as asked (a move waits for the links it needs).
            for p in everyone:
                p.paused = True
            await quiet(*everyone)
            marks = [len(p.lines) for p in everyone]
            renumbered = trio.current_time()
            await trio.to_thread.run_sync(renumber, lab, host, "198.51.100.121")
            for p in everyone:
                await p.resume()
            printed = await ana.wait_for("BRJ-", 60, start=marks[0])
            code_s, rejoin = ana.stamp_of(printed, marks[0]) - renumbered, printed.strip()
            await trio.sleep(PASTE_AFTER)
            pasted_at = [len(p.lines) for p in others]
            for p in others:
                await p.type(rejoin)
            pasted_s = trio.current_time() - renumbered
            for p, at in zip(others, pasted_at, strict=True):
                await p.wait_for("re-join code accepted", 30, start=at)
            moved: list[float] = []
            for p, mark in zip(everyone, marks, strict=True):
                try:
                    moved.append(await p.first_move(STUCK_AFTER, start=mark))
                except trio.TooSlowError:
                    raise AssertionError(f"{p.name} shows no move after the paste:\n{p.tail()}"
                                         f"\n--\n{ana.tail()}") from None  # fmt: skip
            for p, at in zip(others, pasted_at, strict=True):
                assert not any("waiting for ana" in x for x in p.lines[at:]), p.tail()
            # Its new public address, and no address of its LAN, is what it calls public.
            changed = await ana.wait_for("your public address changed", 5, start=marks[0])
            assert "(now 198.51.100.121:4700)" in changed, changed
            nursery.cancel_scope.cancel()
            return Renumbered(code_s, pasted_s, max(moved) - renumbered)
    finally:
        await kill_leftovers(procs)
    raise AssertionError("unreachable")  # pragma: no cover
