"""A host started with `--bots` that is killed (`kill -9`) takes its bot peers down with it
(they are its children); `resume` of that table starts them again, each from its own data
directory, so with the identity it had (real processes on 127.0.0.1)."""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path

import pytest

from buraco_p2p.cli import build_parser
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.play import hostjoin
from buraco_p2p.play.store import TableStore
from tests.line_proc import LineProc

from .lost import processes_with


def _bot_peers(home: Path) -> list[tuple[int, list[str]]]:
    """The running `bot-peer` processes whose data directory is under `home`."""
    return [(pid, argv) for pid, argv, _ in processes_with("bot-peer", home)]


def _until(what: str, ready: object, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _killed_host_with_a_bot(tmp_path: Path) -> tuple[str, Path, bytes]:
    """A line host with one bot peer, killed (`kill -9`) once the hand is dealt: the table,
    the bot's data directory and its identity key (its bot ended with its host)."""
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
        key = Identity.from_seed(seed, "bot").public.raw
        os.kill(host.p.pid, signal.SIGKILL)
        host.p.wait()
        _until("the bot ended with its host", lambda: not _bot_peers(tmp_path))
    finally:
        host.close()
    return table, data, key


def test_a_resumed_host_starts_its_bots_again_with_their_identities(tmp_path: Path) -> None:
    table, data, key = _killed_host_with_a_bot(tmp_path)
    again = LineProc(["resume", table, "--line"], tmp_path)
    try:
        _until("a bot peer resumed", lambda: len(_bot_peers(tmp_path)) == 1)
        ((_, argv),) = _bot_peers(tmp_path)
        assert argv[argv.index("--resume") + 1] == table
        assert Path(argv[argv.index("--data-dir") + 1]) == data
        _, again_seed = TableStore.for_table(bytes.fromhex(table), data).load_secret()
        assert again_seed is not None and Identity.from_seed(again_seed, "bot").public.raw == key
        names = again.table_names()
        assert names.count("(bot)") == 1 and "ana (you)" in names, names
    finally:
        again.close()
    _until("the bot ended when the host left", lambda: not _bot_peers(tmp_path), 60)


class _Screen:
    """The full-screen client as `hostjoin.FullScreen` names it, standing in for the
    prompt_toolkit application (the tmux tests run the real one): while it runs, it notes
    the bot peer processes that run beside it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.seen: list[list[str]] = []

    def host(self, args: argparse.Namespace, rules: object, root: Path) -> int:
        raise AssertionError("not a host")

    def join(self, args: argparse.Namespace, root: Path) -> int:
        raise AssertionError("not a join")

    def resume(
        self, args: argparse.Namespace, root: Path, table: bytes, bots: frozenset[bytes]
    ) -> int:
        _until("a bot peer resumed beside the screen", lambda: len(_bot_peers(self.home)) == 1)
        self.seen = [argv for _, argv in _bot_peers(self.home)]
        return 0


def test_the_full_screen_resume_starts_the_bots_again_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, data, key = _killed_host_with_a_bot(tmp_path)
    monkeypatch.setenv("BURACO_P2P_HOME", str(tmp_path / "cfg"))
    args = build_parser().parse_args(["resume", table, "--data-dir", str(tmp_path)])
    screen = _Screen(tmp_path)
    assert hostjoin._resume_screen(args, screen) == 0
    ((argv,),) = (screen.seen,)
    assert argv[argv.index("--resume") + 1] == table
    assert Path(argv[argv.index("--data-dir") + 1]) == data
    _, seed = TableStore.for_table(bytes.fromhex(table), data).load_secret()
    assert seed is not None and Identity.from_seed(seed, "bot").public.raw == key
    _until("the bot ended when the screen closed", lambda: not _bot_peers(tmp_path), 60)
