"""Several players on one machine: each running client is a self of its own.

A person trying a table between two terminals of one machine starts `host` in one and `join`
in the other, with the same home directory. Both would read the same identity (the host
would be asked to seat itself) and keep the table in the same directory (whose lock the
second would meet only when the match starts). So a client that plays (`play`, `host`,
`join`, `resume`) first claims a self: an identity (a config directory) and the tables kept
with it (a data directory), each held by an exclusive `flock` on its `self.lock` until the
process ends. Self 1 is the directories as given (the user's own by default); a client that
finds them held by another takes the first free self N among `others/N` under both: its own
identity (created on first use, named after self 1's with `-N`), its own tables. It says so
in one line (`Self.note`), and the commands it prints name its directories.

`resume TABLE` takes the first free self that holds the table; a table whose only self is
held is open in another client (`TableHeld`). Nothing here reads the identity's key: a self
is its directories.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from buraco_p2p.net.channel.errors import IdentityError
from buraco_p2p.net.channel.identity import (
    IDENTITY_FILE,
    default_config_dir,
    load_or_create_identity,
)
from buraco_p2p.play.store import default_data_dir

__all__ = [
    "MAX_SELVES", "NoSelf", "Self", "TableHeld", "claim", "claim_for", "dir_options", "selves",
]

MAX_SELVES = 9
LOCK = "self.lock"
OTHERS = "others"

_held: list[int] = []  # the lock files of the self this process claimed, open until it ends


class NoSelf(Exception):
    """Every self of these directories is held by a running client."""


class TableHeld(NoSelf):
    """The table asked for is kept only by selves that running clients hold."""


@dataclass(frozen=True, slots=True)
class Self:
    """One player of this machine: `config` holds the identity, `data` the tables; `number`
    1 is the directories as given, N the `others/N` under them."""

    number: int
    config: Path
    data: Path
    nickname: str = ""  # the identity's name for a new other self ("" once it exists)

    def note(self) -> str:
        """One line for an other self: who it is and where (empty for self 1)."""
        if self.number == 1:
            return ""
        return (f"another buraco-p2p on this machine holds your identity and tables: this one "
                f"plays as a second player, self {self.number} (identity and tables under "
                f"{self.config} and {self.data})")  # fmt: skip


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def selves(config: Path | None = None, data: Path | None = None) -> list[Self]:
    """Every self these directories can have, self 1 first (held or not)."""
    config = config if config is not None else default_config_dir()
    data = data if data is not None else default_data_dir()
    out = [Self(1, config, data)]
    for n in range(2, MAX_SELVES + 1):
        out.append(Self(n, config / OTHERS / str(n), data / OTHERS / str(n)))
    return out


def claim(
    config: Path | None = None, data: Path | None = None, *, table: bytes | None = None
) -> Self:
    """Hold the first free self (with `table`: the first free one that keeps it) for the
    rest of this process (a process is one self: a self it held before is let go first);
    `NoSelf` (or `TableHeld`) if none is free."""
    while _held:
        fd = _held.pop()
        if fd >= 0:
            os.close(fd)
    found_held = False
    for s in selves(config, data):
        if table is not None and not (s.data / "tables" / table.hex() / "secret").exists():
            continue
        fds = _lock_both(s)
        if fds is None:
            found_held = True
            continue
        _held.extend(fds)
        if s.number > 1 and not (s.config / IDENTITY_FILE).exists():
            return Self(s.number, s.config, s.data, _other_name(selves(config, data)[0], s))
        return s
    if table is not None and found_held:
        raise TableHeld(f"table {table.hex()} is open in another buraco-p2p on this machine")
    if table is not None:
        return selves(config, data)[0]  # it is nowhere: the caller says so
    raise NoSelf(f"{MAX_SELVES} buraco-p2p clients already run with these directories")


def _other_name(first: Self, other: Self) -> str:
    """Self N's name on first use: self 1's with `-N` (cut to fit a nickname)."""
    try:
        base = load_or_create_identity(first.config).nickname
    except IdentityError:
        base = "player"
    suffix = f"-{other.number}"
    return base[: 24 - len(suffix)] + suffix


def _lock_both(s: Self) -> list[int] | None:
    """Both locks of `s`, or None (and neither) if another process holds either."""
    fds: list[int] = []
    for d in (s.config, s.data):
        fd = _lock(d)
        if fd is None:
            for held in fds:
                os.close(held)
            return None
        fds.append(fd)
    return fds


def _lock(directory: Path) -> int | None:
    if sys.platform == "win32":  # pragma: no cover - one self per directory there
        return -1
    import fcntl

    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def claim_for(args: argparse.Namespace, table: bytes | None = None) -> Self:
    """`claim` for a command's parsed options: `config_dir` and `data_dir` become the
    self's (so everything after uses them), `nick` its name if it is a new other self, and
    `self_note` its line (empty for self 1)."""
    given_config = getattr(args, "config_dir", None)
    given_data = getattr(args, "data_dir", None)
    s = claim(Path(given_config) if given_config else None,
              Path(given_data) if given_data else None, table=table)  # fmt: skip
    args.config_dir = str(s.config)
    args.data_dir = str(s.data)
    if s.nickname and not getattr(args, "nick", None):
        args.nick = s.nickname
    args.self_note = s.note()
    args.dir_options = dir_options(given_config, given_data)
    return s


def dir_options(config: str | None, data: str | None) -> str:
    """The directory options a command was given, to repeat in a command it suggests
    (`resume TABLE` finds the self that keeps the table by itself)."""
    given = [f"--config-dir {_quoted(Path(config))}" if config else "",
             f"--data-dir {_quoted(Path(data))}" if data else ""]  # fmt: skip
    return " ".join(g for g in given if g)
