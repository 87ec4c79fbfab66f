"""A host started with `--bots` that is killed (`kill -9`) takes its bot peers down with it
(they are its children); `resume` of that table starts them again, each from its own data
directory, so with the identity it had (real processes on 127.0.0.1)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.play.store import TableStore
from tests.line_proc import LineProc


def _bot_peers(home: Path) -> list[tuple[int, list[str]]]:
    """The running `bot-peer` processes whose data directory is under `home`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0")[:-1]]
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if "bot-peer" not in argv or "--data-dir" not in argv or state == "Z":
            continue
        if Path(argv[argv.index("--data-dir") + 1]).is_relative_to(home):
            found.append((int(proc.name), argv))
    return found


def _until(what: str, ready: object, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_resumed_host_starts_its_bots_again_with_their_identities(tmp_path: Path) -> None:
    host = LineProc(["host", "--line", "--bots", "1", "--players", "2", "--listen", "127.0.0.1",
                     "--nick", "ana"], tmp_path)  # fmt: skip
    try:
        host.wait_for("every seat is taken")
        host.type("/ready")
        table = host.wait_for("after a crash: buraco-p2p resume").split()[1]
        host.wait_for("dealt")
        ((_, argv),) = _bot_peers(tmp_path)
        data = Path(argv[argv.index("--data-dir") + 1])
        _, seed = TableStore.for_table(bytes.fromhex(table), data).load_secret()
        assert seed is not None
        key = Identity.from_seed(seed, "bot").public
        os.kill(host.p.pid, signal.SIGKILL)
        host.p.wait()
        _until("the bot ended with its host", lambda: not _bot_peers(tmp_path))
    finally:
        host.close()
    again = LineProc(["resume", table, "--line"], tmp_path)
    try:
        _until("a bot peer resumed", lambda: len(_bot_peers(tmp_path)) == 1)
        ((_, argv),) = _bot_peers(tmp_path)
        assert argv[argv.index("--resume") + 1] == table
        assert Path(argv[argv.index("--data-dir") + 1]) == data
        _, again_seed = TableStore.for_table(bytes.fromhex(table), data).load_secret()
        assert again_seed is not None and Identity.from_seed(again_seed, "bot").public == key
        names = again.table_names()
        assert names.count("(bot)") == 1 and "ana (you)" in names, names
    finally:
        again.close()
    _until("the bot ended when the host left", lambda: not _bot_peers(tmp_path), 60)
