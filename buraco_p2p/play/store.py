"""One table's directory on disk: what a peer needs to continue after any crash.

Layout of `<data dir>/tables/<table id hex>/` (directory 0700, every file 0600):

    log      the match log in the `buraco_p2p.logfile` format: the header, then one record
             per entry in log order, appended and synced (`fdatasync`, which also makes the
             file's new length durable) before the entry is acted on (sent, shown,
             answered); the directory is synced once when the file is created. A crash can
             leave a partial last record: loading drops it (the entry is fetched again from
             the peers).
    secret   msgpack map {"rng": 32 bytes, "identity": 32 bytes or nil}: the secret every
             random draw of this peer derives from (`play.keyed`: hand keys, commit-reveal
             nonces and shuffles are rebuilt from it and the log, so no key is written), and,
             for a bot peer, its identity's private seed (a person's identity stays in the
             config directory). Written once, atomically.
    table    msgpack map {"invite": invite bytes, "host": bool, "port": int, "seat": int}:
             how to reach the table again (the host listens on the same port).
    roster   the host's last roster (`Roster.to_wire`), so a restarted host readmits the
             seated peers (host only).
    rules    msgpack map {"rules": `RuleSet.to_wire()`, "timeout": int ms}: the terms the host
             proposes, so a host restarted before the genesis was signed proposes the same
             ones (host only; written with the table file, before the invite is shown).
    lock     the process id of the peer that has the table open, under an exclusive
             `flock` held while it runs: a second process on the same table (a `resume`
             beside a running peer, a `join` with the same code) is refused, since two
             writers of one log could sign two different entries for one slot of it.

Cards revealed to us need no file of their own: they are opened by decryption shares that
are in the log, with our hand key rebuilt from `secret`.
"""

from __future__ import annotations

import os
import secrets as _secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from buraco_p2p import codec
from buraco_p2p.logfile import LogFileError, decode_log, header, record
from buraco_p2p.privatefile import write_private

__all__ = ["StoreError", "TableMeta", "TableStore", "default_data_dir"]

APP_NAME = "buraco-p2p"
DATA_ENV = "BURACO_P2P_DATA"


# Void entries of ours a votes file may hold: the session keeps only those not behind its
# settled point (a few per point and try), so this only bounds what a damaged or foreign file
# can make a client read.
MAX_VOTES = 1 << 16


class StoreError(Exception):
    """A table directory that cannot be used: names the file and why."""


def default_data_dir() -> Path:
    """`$BURACO_P2P_DATA` if set (tests, several peers on one machine), else platformdirs'."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir(APP_NAME))


@dataclass(frozen=True)
class TableMeta:
    invite: bytes
    host: bool
    port: int
    seat: int

    def to_wire(self) -> dict[str, Any]:
        return {"invite": self.invite, "host": self.host, "port": self.port, "seat": self.seat}

    @classmethod
    def from_wire(cls, value: Any) -> TableMeta:
        if not isinstance(value, dict) or set(value) != {"invite", "host", "port", "seat"}:
            raise StoreError("table: not a map of invite, host, port, seat")
        inv, host, port, seat = value["invite"], value["host"], value["port"], value["seat"]
        if not isinstance(inv, bytes) or type(host) is not bool:
            raise StoreError("table: invite must be bytes and host a boolean")
        if type(port) is not int or not 0 <= port <= 65535 or type(seat) is not int:
            raise StoreError("table: port must be 0..65535 and seat an integer")
        return cls(inv, host, port, seat)


class TableStore:
    """The files of one table. `append(wire)` is durable when it returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._log_fd: int | None = None
        self._lock_fd: int | None = None
        self.syncs = 0  # log syncs so far (the benchmark reports them)

    @classmethod
    def for_table(cls, table_id: bytes, root: Path | None = None) -> TableStore:
        return cls((root or default_data_dir()) / "tables" / table_id.hex())

    # -- secret and table ---------------------------------------------------------------

    def create(
        self, meta: TableMeta, identity_seed: bytes | None, rng_secret: bytes | None = None
    ) -> bytes:
        """Make the directory and its secret (once: a restart keeps the first); returns the
        randomness secret. `rng_secret` is for reproducible self-play only.

        The table file is written first: a process killed in between leaves no secret, so a
        table with a secret always has the table file a resume needs."""
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path, 0o700)
        self.save_meta(meta)
        if not (self.path / "secret").exists():
            rng = rng_secret if rng_secret is not None else _secrets.token_bytes(32)
            write_private(self.path / "secret", codec.pack({"rng": rng, "identity": identity_seed}))
        return self.load_secret()[0]

    def save_meta(self, meta: TableMeta) -> None:
        write_private(self.path / "table", codec.pack(meta.to_wire()))

    def save_roster(self, roster: Any) -> None:
        write_private(self.path / "roster", codec.pack(roster))

    def save_rules(self, rules: Any, timeout_ms: int) -> None:
        write_private(self.path / "rules", codec.pack({"rules": rules, "timeout": timeout_ms}))

    def load_rules(self) -> tuple[Any, int]:
        """The saved terms (the rules' wire form, unchecked: `RuleSet.from_wire` checks it)."""
        value = self._read_msgpack("rules")
        if not isinstance(value, dict) or set(value) != {"rules", "timeout"}:
            raise StoreError("rules: not a map of rules, timeout")
        if type(value["timeout"]) is not int or value["timeout"] <= 0:
            raise StoreError("rules: timeout must be a positive integer")
        return value["rules"], value["timeout"]

    def load_roster(self) -> Any:
        return self._read_msgpack("roster") if (self.path / "roster").exists() else None

    def load_meta(self) -> TableMeta:
        return TableMeta.from_wire(self._read_msgpack("table"))

    def load_secret(self) -> tuple[bytes, bytes | None]:
        value = self._read_msgpack("secret")
        if not isinstance(value, dict) or set(value) != {"rng", "identity"}:
            raise StoreError("secret: not a map of rng, identity")
        rng, ident = value["rng"], value["identity"]
        if not isinstance(rng, bytes) or len(rng) != 32:
            raise StoreError("secret: rng must be 32 bytes")
        if ident is not None and (not isinstance(ident, bytes) or len(ident) != 32):
            raise StoreError("secret: identity must be 32 bytes or nil")
        return rng, ident

    def _read_msgpack(self, name: str) -> Any:
        try:
            data = (self.path / name).read_bytes()
        except OSError as exc:
            raise StoreError(f"{name}: {exc.strerror or exc}") from None
        try:
            return codec.unpack(data)
        except codec.CodecError as exc:
            raise StoreError(f"{name}: not msgpack ({exc})") from None

    # -- our void entries -----------------------------------------------------------------

    def save_votes(self, wires: list[bytes]) -> None:
        """Keep the void entries we signed and have not seen applied (the latest last),
        durable when this returns: they are written before they are sent, so a restarted
        client stands by what it signed and signs no other void at the same point. Every one
        the session still holds is kept (it drops those behind its settled point): a vote
        or a decline left out would let a restarted client sign another at its point and
        try, two votes of one party, or a vote where it declined."""
        if len(wires) > MAX_VOTES:
            raise StoreError(f"votes: more than {MAX_VOTES} entries to keep")
        write_private(self.path / "votes", codec.pack(list(wires)))

    def load_votes(self) -> list[bytes]:
        """The void entries saved by `save_votes` (none if there is no file); each is checked
        again, like every saved entry, when it is replayed."""
        if not (self.path / "votes").exists():
            return []
        value = self._read_msgpack("votes")
        if not isinstance(value, list) or not all(isinstance(w, bytes) for w in value):
            raise StoreError("votes: not an array of entries")
        if len(value) > MAX_VOTES:
            raise StoreError(f"votes: more than {MAX_VOTES} entries")
        return value

    # -- log ------------------------------------------------------------------------------

    def load_log(self) -> list[bytes]:
        """The entries saved so far; a partial last record (a crash mid-write) is cut off."""
        path = self.path / "log"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        if len(data) <= len(header()):
            return []
        try:
            return decode_log(data)
        except LogFileError as exc:
            if not exc.reason.startswith("truncated") or exc.offset <= len(header()):
                raise StoreError(f"log: {exc}") from None
            good = decode_log(data[: exc.offset])
            with open(path, "r+b") as f:
                f.truncate(exc.offset)
                os.fsync(f.fileno())
            return good

    def append(self, wires: list[bytes]) -> None:
        """Append entries to the log, durable when this returns: one write and one sync for
        all of them (a batch costs what one entry does)."""
        if not wires:
            return
        data = b"".join(record(w) for w in wires)
        if self._log_fd is None:
            path = self.path / "log"
            created = not path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if os.fstat(fd).st_size == 0:
                data = header() + data
            self._log_fd = fd
            if created:
                _sync_dir(self.path)
        view = memoryview(data)
        while view:
            n = os.write(self._log_fd, view)
            view = view[n:]
        _datasync(self._log_fd)
        self.syncs += 1

    def cut(self, length: int) -> None:
        """Keep only the first `length` entries of the log, durable when this returns: the
        peer rolled its log back to an equivocated index (docs/protocol.md 4.6)."""
        wires = self.load_log()
        if len(wires) <= length:
            return
        size = len(header()) + sum(len(record(w)) for w in wires[:length])
        with open(self.path / "log", "r+b") as f:
            f.truncate(size)
            os.fsync(f.fileno())

    def lock(self) -> None:
        """Hold the table for this process until `close` (or the process ends), or raise
        `StoreError` naming the process that holds it."""
        if self._lock_fd is not None or sys.platform == "win32":  # pragma: no cover
            return
        import fcntl

        fd = os.open(self.path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 20).decode("ascii", "replace").strip()
            os.close(fd)
            who = f"process {holder}" if holder.isdigit() else "another process"
            raise StoreError(f"{self.path}: the table is open in {who}") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd

    def close(self) -> None:
        """Close the log and let the table go (the lock)."""
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def _datasync(fd: int) -> None:
    """The data and what reading it back needs (the length), not the timestamps."""
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:  # pragma: no cover - macOS, Windows
        os.fsync(fd)


def _sync_dir(path: Path) -> None:
    """Make a new name in `path` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
