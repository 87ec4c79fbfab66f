"""`buraco-p2p verify LOG | head -1`: a reader that goes away early ends the command quietly,
with the verdict's exit code, as `cat` would; no traceback, no "Exception ignored" at exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from audit_helpers import match_log

from buraco_p2p.audit import EXIT_FAIR


@pytest.mark.parametrize("form", [[], ["--json"]])
def test_verify_into_a_closed_pipe_stops_quietly(tmp_path: Path, form: list[str]) -> None:
    path = tmp_path / "match.log"
    path.write_bytes(match_log())
    # The reading end is closed before the command starts, so its first write fails (the
    # way `head -1` leaves it), whatever the scheduling.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "buraco_p2p", "verify", *form, str(path)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=300,
            check=False,
        )
    finally:
        os.close(write_end)
    err = done.stderr.decode()
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert err == ""
    assert done.returncode == EXIT_FAIR
