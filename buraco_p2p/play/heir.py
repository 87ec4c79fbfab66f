"""A party that left is replaced by a bot: the host's side and the new identity's start-up.

The host (and only the host: it alone can free a seat and seat a key at the table's door)
answers a `replace` (typed, or a bot's after the table's timeout) with `Heirs`: for each
silent party it makes a new identity, signs a "replace" void naming that key, frees the
silent party's seat in the roster (a kick, so the roster's succession stays lawful), lets the
new key in at the door without asking, and starts a `bot-peer` process with that identity.

The new process (`bot-peer --join CODE --heir`) is an heir: `fetch_genesis` asks the table
for its log from the start, checks the genesis in full (every party's signature, this table,
the host among its parties, our key not among them) and the driver then follows the log as
a verifier (`Peer(..., heir=True)`) until the replace round is applied, and plays the seat
from the hand dealt again after it. Everything the heir is sent before then is the public
log; the present parties' shares for its hand are made only once the whole round is applied
(the session's rule), and its hand keys are its own.

If the host itself is the party gone, nobody can seat a new key: the bots then propose to end
the match instead (see `Driver`), and people can type `end` or `void`.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.play.cluster import BotProcess
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.store import StoreError, TableStore
from buraco_p2p.session import Entry, decode_entry, parse_genesis
from buraco_p2p.session.errors import LogError

__all__ = [
    "SEED_ENV",
    "HeirError",
    "Heirs",
    "fetch_genesis",
    "heir_log_path",
    "let_in",
    "resume_argv",
]

log = logging.getLogger(__name__)

Backlog = list[tuple[PeerKey, Any]]
SEED_ENV = "BURACO_P2P_BOT_SEED"  # as `play.botpeer`: the identity seed of a started bot
ASK_EVERY = 1.0  # seconds between asks for the genesis
GRACE = 60.0  # seconds a started bot has to take its seat before it may be replaced in turn


class HeirError(RuntimeError):
    """The table's log cannot be taken up by this identity (the text says why)."""


def let_in(mesh: Mesh, key: PeerKey) -> None:
    """Host: seat `key` at the door without asking (a bot the host itself starts)."""
    before = mesh.door.approve

    async def approve(request: Any) -> bool:
        if request.key == key:
            await trio.lowlevel.checkpoint()
            return True
        return await before(request)

    mesh.door.approve = approve


class Heirs:
    """The host's `replace`: new identities for silent parties, their seats, their bots.

    `root` holds the bots' data directories; `args` are added to each bot's command line
    (its strength, timeout, where to write its log); `make_seed(party)` gives the 32-byte
    identity seed (random unless a reproducible run derives it)."""

    def __init__(
        self,
        driver: Driver,
        root: Path,
        *,
        args: Sequence[str] = (),
        make_seed: Callable[[int], bytes] | None = None,
    ) -> None:
        self.driver = driver
        self.root = root
        self.args = list(args)
        self.log_out: Callable[[int], str] | None = None
        self.make_seed = make_seed or (lambda _p: os.urandom(32))
        self.procs: list[BotProcess] = []
        self.lines: queue.Queue[tuple[int, str]] = queue.Queue()
        self._todo_in, self._todo_out = trio.open_memory_channel[list[tuple[int, bytes]]](16)

    def __call__(self, silent: tuple[int, ...]) -> str:
        """Propose "replace" for `silent` (the parties the table waits for); the seats and
        processes follow in `run`. Returns what happened, in words."""
        d = self.driver
        if not d.mesh.is_host:
            return "no agreement proposed: only the host can seat a bot in a seat"
        if not silent:
            return "no agreement proposed: nobody has kept the table waiting past its timeout"
        mine = d.peer.agreement
        if mine is not None:
            return f"no agreement proposed: already agreed to {mine.action}"
        now = time.monotonic()
        starting = [p.index for p in self.procs
                    if p.proc.poll() is None and now - p.started < GRACE]  # fmt: skip
        if set(silent) & set(starting):
            return "no agreement proposed: the bot taking that seat is still starting"
        seeds = [(p, self.make_seed(p)) for p in silent]
        keys = tuple(Identity.from_seed(s, "heir").public.raw for _, s in seeds)
        try:
            d.propose_replace(silent, keys)
        except ValueError as exc:
            return f"no agreement proposed: {exc}"
        self._todo_in.send_nowait(seeds)
        names = ", ".join(d.peer.table.terms.nicknames[p] for p in silent)
        return f"proposed: replace {names} by a bot"

    async def run(self) -> None:
        """Start again the heirs a restarted host had seated; then free each replaced seat
        and start its bot (after our void is signed and sent)."""
        mesh = self.driver.mesh
        # whoever opened the node sets `args` and `log_out` before its first checkpoint
        await trio.lowlevel.checkpoint()
        self.restart_seated()
        async for seeds in self._todo_out:
            for party, seed in seeds:
                heir = Identity.from_seed(seed, "heir")
                old = self.driver.peer.table.keys[party]
                let_in(mesh, heir.public)
                if mesh.roster is not None and mesh.roster.member(old) is not None:
                    try:
                        await mesh.kick(old)
                    except MeshError as exc:
                        log.warning("could not free the seat of %s: %s", old.fingerprint(), exc)
                self._spawn(party, seed, ["--join", mesh.invite.to_text(), "--heir"])
                await self._save_roster_once_seated(heir.public)

    async def _save_roster_once_seated(self, key: PeerKey) -> None:
        """Keep the roster on disk with the new key in its seat, so a host that restarts
        seats the bot and not the player it replaced."""
        mesh = self.driver.mesh
        with trio.move_on_after(GRACE):
            while mesh.roster is None or mesh.roster.member(key) is None:
                await trio.sleep(0.2)
        if mesh.roster is not None:
            self.driver.store.save_roster(mesh.roster.to_wire())

    def restart_seated(self) -> None:
        """Start every heir of this table whose key the roster seats, from its own data
        directory (`bot-peer --resume`): its process was the host's child and ended with a
        host that crashed; the restored roster readmits it, the restarted host starts it."""
        mesh = self.driver.mesh
        if mesh.roster is None or not self.root.is_dir():
            return
        for data in sorted(self.root.glob("heir-*")):
            try:
                _, seed = TableStore.for_table(mesh.table_id, data).load_secret()
            except StoreError:
                continue  # not an heir of this table, or killed before it kept its secret
            if seed is None:
                continue
            key = Identity.from_seed(seed, "heir").public
            party = self._seat_of(key)
            if mesh.roster.member(key) is None or party is None:
                continue  # replaced in turn, or never seated
            log.info("starting heir %s of party %d again", key.fingerprint(), party)
            self._spawn(party, seed, ["--resume", mesh.table_id.hex(), "--heir"])

    def _seat_of(self, key: PeerKey) -> int | None:
        """The party the latest "replace" void naming `key` in our log passes to it."""
        party = None
        for e in self.driver.peer.log:
            if e.kind == "void" and e.body.get("action") == "replace":
                for p, k in zip(e.body["silent"], e.body["keys"], strict=False):
                    if k == key.raw:
                        party = p
        return party

    def _spawn(self, party: int, seed: bytes, how: list[str]) -> None:
        short = Identity.from_seed(seed, "heir").public.short()
        name = f"heir-{party}-{short}"
        data = self.root / name
        data.mkdir(parents=True, exist_ok=True, mode=0o700)
        argv = [sys.executable, "-m", "buraco_p2p", "bot-peer", *how,
                "--data-dir", str(data), "--name", f"bot-{short}", *self.args]  # fmt: skip
        if self.log_out is not None:
            argv += ["--log-out", self.log_out(party)]
        env = {SEED_ENV: seed.hex()}
        self.procs.append(BotProcess(party, argv, self.lines, self.root / f"{name}.stderr", env))

    def close(self, timeout: float = 10.0) -> None:
        """End the bots started here (each exits once its input closes)."""
        for p in self.procs:
            if p.proc.poll() is None:
                p.finish(timeout)
            else:
                p.close()


async def fetch_genesis(mesh: Mesh, identity: Identity) -> tuple[Entry, Backlog]:
    """An heir's start: ask the seated peers for the log from its first entry and take the
    genesis once it checks in full; the other messages that came meanwhile are returned for
    the driver. `HeirError` if a checked genesis is not one this identity can take up."""
    backlog: Backlog = []
    while True:
        await mesh.broadcast(["sync", 0])
        with trio.move_on_after(ASK_EVERY):
            while True:
                key, msg = await mesh.receive()
                genesis = _genesis_in(msg, key)
                if genesis is None:
                    backlog.append((key, msg))
                    continue
                _check(mesh, identity, genesis)
                return genesis, backlog


def _genesis_in(msg: Any, key: PeerKey) -> Entry | None:
    if not (isinstance(msg, list) and len(msg) == 2 and msg[0] == "e"
            and isinstance(msg[1], bytes)):  # fmt: skip
        return None
    try:
        entry = decode_entry(msg[1])
        if entry.index != 0:
            return None
        parse_genesis(entry)
    except LogError as exc:
        log.info("a bad genesis from %s: %s", key.fingerprint(), exc)
        return None
    return entry


def _check(mesh: Mesh, identity: Identity, genesis: Entry) -> None:
    terms = parse_genesis(genesis)
    if terms.table_id != mesh.table_id:
        raise HeirError("the genesis names another table")
    roster = mesh.roster
    if roster is None or roster.host.key not in terms.keys:
        raise HeirError("the host of this table is not a party of its genesis")
    if identity.public in terms.keys:
        raise HeirError("this identity is already a party of the table: resume it instead")


def heir_log_path(log_out: str, party: int) -> str:
    """Where a bot peer that hosts writes the log of the heir of `party` (next to its own)."""
    p = Path(log_out)
    return str(p.with_name(f"{p.stem}-heir-{party}{p.suffix}"))


def resume_argv(argv: Sequence[str], table: str) -> list[str]:
    """The command that resumes the heir an `argv` started (`--join CODE` becomes
    `--resume TABLE`; `--heir` stays, for an heir killed before it had saved the genesis,
    and so do its data directory, which holds its identity, and the rest)."""
    out: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--join":
            next(it, None)
            out += ["--resume", table]
        else:
            out.append(arg)
    if "--resume" not in out or "--heir" not in out:
        raise ValueError("not the command line of an heir bot peer")
    return out
