"""One way to write a file only its owner may read, so that a crash never leaves half of it.

Identity keys and a table's saved secrets both need it: the data goes to a temporary file in
the same directory (mode 0600), is flushed to disk, replaces the old file in one rename, and
the directory entry is flushed too. A crash at any point leaves the old file or the new one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_private"]


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` readable by the owner only; the old file survives any crash."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
