"""Speed of the full-screen client, printed as one JSON object.

    python benchmarks/ui.py [--frames N] [--keys N] [--seed N]

- frame_ms_p99 (and p50, max): one full redraw of the table at 80x24 as prompt_toolkit draws
  it to a terminal: the renderer reset (so nothing is reused from the previous frame), the
  screen built from the client's state, laid out and written as VT100 output into a buffer.
  Frames are taken over the positions of a practice match played by bots, the own hand and
  both sides' melds growing as it goes, the table feed telling every move, and the 120x40
  and 132x43 sizes besides (`frame_ms_p99_120x40`, ...). The positions are made
  first and frozen out of the garbage collector's way (`gc.freeze`), so that its pauses are
  the client's, not the benchmark's.
- key_to_screen_ms_p99 (and p50): from a key written to the terminal input to the end of the
  redraw that shows its effect, in the running application (prompt_toolkit on asyncio, the
  table on trio in guest mode), the key moving the cursor in the hand.
- lobby_frame_ms_p99 (and p50): one full redraw of the host's lobby screen at 80x24, over a
  real table hosted on 127.0.0.1 (the invite, the seats, the rules, a full log of chat).
- replay_open_s: `buraco-p2p replay` on the log of a 24-hand match (`--replay-hands`; the
  timed match `benchmarks/session.py` audits for verify_match_s, or `--replay-log FILE`), from
  reading the file to its first screen drawn at 80x24: the log read, verify's child process
  started (its proofs on every core, as `verify --jobs`), the first hand settled good by it,
  walked and told. replay_verified_s: until the whole log is settled and walked, the end's
  verdict in (the screen answers keys all along). replay_step_ms_p99 (and p50, max): one step
  (the next move, a key) and the redraw it causes at 80x24 (prompt_toolkit writing what
  changed, as on every key), over every frame of the match face up and then as seat 0 sees it
  (each deal told as it is first stepped into); replay_step_cpu_ms_p99 the same in this
  thread's CPU time, which a machine shared with other work does not inflate.
  replay_frames: the frames stepped. The log is made first (about a minute of self-play).

Targets: frame_ms_p99 <= 20 (the client issue); replay_open_s <= 2, replay_step_ms_p99 <= 20.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import random
import statistics
import time
from typing import Any

import trio
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import DummyInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from buraco_p2p.bots import HeuristicBot
from buraco_p2p.engine import LocalTable, Match
from buraco_p2p.rules import get_preset
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import Narrator
from buraco_p2p.ui import ChatLine, PracticeTable, TableApp, TableSnapshot

SIZES = ((80, 24), (120, 40), (132, 43))


def buffer_output(cols: int, rows: int) -> tuple[Vt100_Output, io.StringIO]:
    buf = io.StringIO()
    size = Size(rows=rows, columns=cols)
    return Vt100_Output(buf, lambda: size, term="xterm-256color"), buf


def positions(seed: int, count: int) -> list[TableSnapshot]:
    """Snapshots of seat 0 over a bot match: every few moves, so hands and melds vary."""
    rules = get_preset("classic")
    feed = PracticeTable(rules, seed, bot_delay=0)
    base = feed.snapshot()
    rng = random.Random(seed)
    bot = HeuristicBot()
    out: list[TableSnapshot] = []
    match = Match(rules, 0)
    while len(out) < count:
        if match.over:
            match = Match(rules, 0)
        table = LocalTable.shuffled(match.next_setup(), rng)
        narrator = Narrator(lambda s: base.seats[s].nick, Glyphs(deck_size=rules.deck_size))
        told: list[ChatLine] = []
        n = 0
        while not table.ended:
            seat = table.referee.turn
            table.push(bot.choose_move(table.views[seat], rng))
            for step in narrator.follow(table.views[0]):
                told.extend(ChatLine(None, text) for text in step.lines)
            n += 1
            if n % 3 == 0:
                out.append(
                    TableSnapshot(
                        title=base.title, rules=rules, me=0, seats=base.seats,
                        view=table.views[0].copy(), scores=tuple(match.scores),
                        fairness=base.fairness, version=len(out) + 1,
                        turn_since=time.monotonic(), extra=base.extra,
                        chat=tuple(told[-500:]),
                    )
                )
        match.record(table.result())
    return out[:count]


def bench_frames(seed: int, frames: int) -> dict[str, Any]:
    snaps = positions(seed, frames)
    # The positions are the benchmark's own baggage, not the client's: keep the collector
    # from walking them on every full collection, as it would not in a running client.
    gc.collect()
    gc.freeze()
    feed = PracticeTable(get_preset("classic"), seed, bot_delay=0)
    result: dict[str, Any] = {}
    for cols, rows in SIZES:
        out, buf = buffer_output(cols, rows)
        app = TableApp(feed, output=out, input=DummyInput())
        times: list[float] = []
        with set_app(app.app):
            for snap in snaps:
                app.client.update(snap)
                app.client.hint()  # a selection and a message line, as in play
                renderer = app.app.renderer
                t = time.perf_counter()
                renderer.reset(leave_alternate_screen=False)
                renderer.render(app.app, app.app.layout)
                times.append((time.perf_counter() - t) * 1000)
                buf.seek(0)
                buf.truncate()
        key = "" if (cols, rows) == (80, 24) else f"_{cols}x{rows}"
        times.sort()
        result[f"frame_ms_p50{key}"] = round(statistics.median(times), 2)
        result[f"frame_ms_p99{key}"] = round(times[int(0.99 * (len(times) - 1))], 2)
        result[f"frame_ms_max{key}"] = round(times[-1], 2)
    result["frames"] = len(snaps)
    return result


async def key_latency(seed: int, keys: int) -> list[float]:
    out, _buf = buffer_output(80, 24)
    with create_pipe_input() as inp:
        feed = PracticeTable(get_preset("classic"), seed, bot_delay=3600)
        app = TableApp(feed, input=inp, output=out)
        renders = 0
        last = 0.0

        def rendered(_: object) -> None:
            nonlocal renders, last
            renders += 1
            last = time.perf_counter()

        app.app.after_render += rendered
        task = asyncio.ensure_future(app.run())
        while app.client.view is None:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        times: list[float] = []
        for _ in range(keys):
            seen = app.keys_seen
            before = renders
            t = time.perf_counter()
            inp.send_text("\x1b[C")  # the right arrow
            while app.keys_seen == seen or renders == before:
                await asyncio.sleep(0)
            times.append((last - t) * 1000)
        app.app.exit()
        await task
    return sorted(times)


def bench_lobby(frames: int) -> dict[str, Any]:
    """Redraws of the host's lobby over a real mesh on loopback (nobody else seated)."""
    import tempfile
    from pathlib import Path

    from buraco_p2p.net.channel.identity import Identity
    from buraco_p2p.net.mesh.lobby import Lobby
    from buraco_p2p.net.mesh.startup import host_table
    from buraco_p2p.ui.netplay import LobbyFeed

    times: list[float] = []

    async def run(root: Path) -> None:
        identity = Identity.from_seed(b"\x07" * 32, "Alice")
        feed = LobbyFeed(identity, root, rules=get_preset("classic"))
        async with host_table(identity, listen_host="127.0.0.1", seats=4) as mesh:
            feed._show_invite(mesh)
            feed.model.attach(Lobby(mesh, feed.model.out))
            for k in range(60):
                feed.model.out(f"<Bob> a chat line number {k} about the rules of the table")
            out, buf = buffer_output(80, 24)
            app = TableApp(feed, output=out, input=DummyInput(), lobby=feed.model)
            with set_app(app.app):
                for k in range(frames):
                    feed.model.text = "typing" * (k % 8)
                    renderer = app.app.renderer
                    t = time.perf_counter()
                    renderer.reset(leave_alternate_screen=False)
                    renderer.render(app.app, app.app.layout)
                    times.append((time.perf_counter() - t) * 1000)
                    buf.seek(0)
                    buf.truncate()

    with tempfile.TemporaryDirectory() as root:
        trio.run(run, Path(root))
    times.sort()
    return {
        "lobby_frame_ms_p50": round(statistics.median(times), 2),
        "lobby_frame_ms_p99": round(times[int(0.99 * (len(times) - 1))], 2),
    }


def replay_log_bytes(hands: int, path: str | None) -> bytes:
    """The log replayed: a saved one, or the timed match of `hands` hands that
    `benchmarks/session.py` audits (a round of clocks after every hand, far from the limit)."""
    if path is not None:
        with open(path, "rb") as f:
            return f.read()
    import itertools

    from buraco_p2p.bots import make_bot
    from buraco_p2p.bots.selfplay import session_match
    from buraco_p2p.logfile import encode_log

    rules = get_preset("classic").with_overrides({"hands": hands, "minutes": 600})
    ticks = itertools.count()
    log = session_match(
        rules, [make_bot("heuristic")] * rules.players, 1, clock=lambda: next(ticks) / 1000
    )
    return encode_log(e.wire for e in log)


def bench_replay(hands: int, path: str | None) -> dict[str, Any]:
    import tempfile
    from pathlib import Path

    from buraco_p2p.replay.checking import Checker
    from buraco_p2p.replay.command import open_log
    from buraco_p2p.ui.replay_app import ReplayApp

    data = replay_log_bytes(hands, path)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "match.log"
        log.write_bytes(data)
        args = argparse.Namespace(logfile=str(log), seat=None, hand=None, ascii=False,
                                  jobs=None, line=False)  # fmt: skip
        screen, buf = buffer_output(80, 24)
        t0 = time.perf_counter()
        opened = open_log(args)
        checker = Checker(opened.data, opened.path, opened.jobs)
        try:
            app = ReplayApp(opened.timeline, opened.name, checker=checker,
                            input=DummyInput(), output=screen)  # fmt: skip
            with set_app(app.app):
                while not opened.timeline.frames:
                    if not app.pump():
                        checker.wait(0.05)
                app.app.renderer.render(app.app, app.app.layout)
                out["replay_open_s"] = round(time.perf_counter() - t0, 3)
                while not opened.timeline.done:
                    if not app.pump():
                        checker.wait(0.05)
                out["replay_verified_s"] = round(time.perf_counter() - t0, 3)
                out["replay_jobs"] = opened.jobs
                out["replay_verdict"] = opened.timeline.code
                gc.collect()
                gc.freeze()
                times: list[float] = []
                cpu: list[float] = []
                for seat in (-1, 0):
                    app.act("home")
                    app.seat = seat
                    for _ in range(len(opened.timeline.frames) - 1):
                        t, c = time.perf_counter(), time.thread_time()
                        app.act("right")
                        app.app.renderer.render(app.app, app.app.layout)
                        times.append((time.perf_counter() - t) * 1000)
                        cpu.append((time.thread_time() - c) * 1000)
                        buf.seek(0)
                        buf.truncate()
                gc.unfreeze()
        finally:
            checker.stop()
    times.sort()
    out["replay_step_ms_p50"] = round(statistics.median(times), 2)
    out["replay_step_ms_p99"] = round(times[int(0.99 * (len(times) - 1))], 2)
    out["replay_step_ms_max"] = round(times[-1], 2)
    cpu.sort()
    out["replay_step_cpu_ms_p99"] = round(cpu[int(0.99 * (len(cpu) - 1))], 2)
    out["replay_frames"] = len(times)
    out["replay_entries"] = len(opened.timeline.walker.wires)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300, help="table positions redrawn")
    parser.add_argument("--keys", type=int, default=200, help="key presses timed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--replay-hands", type=int, default=24, help="hands of the log replayed")
    parser.add_argument("--replay-log", metavar="FILE", help="replay this log instead")
    parser.add_argument("--replay-only", action="store_true", help="only the replay_* figures")
    args = parser.parse_args()
    t0 = time.perf_counter()
    # First, while this process has one thread: verify's child process is forked from it.
    replayed = bench_replay(args.replay_hands, args.replay_log)
    if args.replay_only:
        print(json.dumps(replayed | {"elapsed_s": round(time.perf_counter() - t0, 2)}))
        return
    out: dict[str, Any] = bench_frames(args.seed, args.frames)
    out.update(replayed)
    lat = asyncio.run(key_latency(args.seed, args.keys))
    out["key_to_screen_ms_p50"] = round(statistics.median(lat), 2)
    out["key_to_screen_ms_p99"] = round(lat[int(0.99 * (len(lat) - 1))], 2)
    out["keys"] = len(lat)
    out.update(bench_lobby(args.frames))
    out["trio"] = trio.__version__
    out["elapsed_s"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
