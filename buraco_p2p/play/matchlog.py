"""A match's log where its player finds it, with the commands that audit and replay it.

At a match's end every client keeps a copy of the signed log in its data directory's
`logs/`, named by the table (`logs/<table id>.log`, the id cut short; the `logfile` format that
`verify` and `replay` read), and says the two commands on lines of their own: `verify PATH`
(`--partial` only for a log that stops before the match's end) and `replay PATH`, with one
path. `resume` lists a finished table with the same commands.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

from buraco_p2p.logfile import encode_log
from buraco_p2p.privatefile import write_private

__all__ = ["audit_command", "log_path", "program", "replay_command", "save_log", "told"]


def program() -> str:
    """How to run this program from a shell: `buraco-p2p` where that name is on the PATH and
    is this installation, else this interpreter with `-m buraco_p2p` (someone who started it
    through bootstrap.py has no `buraco-p2p` on the PATH)."""
    found = shutil.which("buraco-p2p")
    here = Path(sys.executable).parent / "buraco-p2p"
    if found is not None and Path(found).resolve() == here.resolve():
        return "buraco-p2p"
    return f"{shlex.quote(sys.executable)} -m buraco_p2p"


SHORT = 8  # hex digits of the table id in a kept log's name: short enough to copy at 80 columns


def log_path(root: Path, table_id: bytes) -> Path:
    """Where a table's log is kept for its player: `<root>/logs/<table id>.log`, the id cut
    to its first 8 hex digits (a command with the path fits an 80-column line) unless
    another table's log already has that name."""
    short = root / "logs" / f"{table_id.hex()[:SHORT]}.log"
    mark = root / "logs" / f".{table_id.hex()}"
    if not short.exists() or mark.exists():
        return short
    return root / "logs" / f"{table_id.hex()}.log"


def save_log(path: Path, wires: Iterable[bytes], table_id: bytes | None = None) -> Path:
    """Write the log's entries to `path` (0600, its directory made 0700); returns it. With
    `table_id`, the short name is marked as that table's (`log_path`)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_private(path, encode_log(wires))
    if table_id is not None:
        write_private(path.parent / f".{table_id.hex()}", path.name.encode())
    return path


def audit_command(path: Path, finished: bool = True) -> str:
    """The command that audits the log at `path` (`--partial`: it stops before the end)."""
    partial = "" if finished else " --partial"
    return f"{program()} verify{partial} {shlex.quote(str(path))}"


def replay_command(path: Path) -> str:
    """The command that replays the match of the log at `path`, hand by hand."""
    return f"{program()} replay {shlex.quote(str(path))}"


def told(path: Path) -> list[str]:
    """The lines that give a finished match's kept log: where it is, then each command on
    a line of its own (copied whole, whatever the terminal's width)."""
    return [f"its log is kept in {path}", "audit it with:", audit_command(path),
            "replay it with:", replay_command(path)]  # fmt: skip
