"""A table's directory is used by one process at a time, and a saved log changed on disk is
refused with one line naming it: files on disk are untrusted, and two writers of one log
could sign two different entries for one slot of it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from buraco_p2p import codec
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.mesh.commands import EXIT_DATA
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.store import TableStore


def _resume(c: Cluster, i: int) -> tuple[int, str]:
    """Resume seat `i` in a process of its own; its exit code and standard error. Its input
    stays open (a bot peer whose input closes leaves at once)."""
    assert c.table is not None
    argv = [sys.executable, "-m", "buraco_p2p", "bot-peer", "--resume", c.table,
            "--data-dir", str(c.root / f"peer-{i}"), "--index", str(i)]  # fmt: skip
    err = c.root / f"resume-{i}.stderr"
    with err.open("w") as f:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=f)
        try:
            code = proc.wait(timeout=120)
        finally:
            proc.kill()
            proc.wait()
            assert proc.stdin is not None
            proc.stdin.close()
    return code, err.read_text()


def _tamper(store: TableStore, index: int) -> None:
    """Flip one bit of entry `index`'s signature, keeping the file's framing and the
    entry's encoding valid: only the signature check can find it."""
    wires = store.load_log()
    entry = codec.unpack(wires[index])
    sigs = [k for k, v in entry.items() if isinstance(v, bytes) and len(v) == 64]
    assert sigs, entry.keys()
    entry[sigs[0]] = bytes([entry[sigs[0]][0] ^ 1]) + entry[sigs[0]][1:]
    wires[index] = codec.pack(entry)
    (store.path / "log").write_bytes(encode_log(wires))


def test_a_second_process_on_a_table_and_a_changed_saved_log_are_refused(
    tmp_path: Path,
) -> None:
    with Cluster(2, tmp_path / "d", tmp_path, seed=12, hands=1,
                 host_args=["--rules", "classic", "--players", "2"]) as c:  # fmt: skip
        c.start()
        c.wait_line(1, "table", 60)
        assert c.table is not None
        store = TableStore.for_table(bytes.fromhex(c.table), c.root / "peer-1")
        deadline = time.monotonic() + 120
        while len(store.load_log()) < 12:
            assert time.monotonic() < deadline, "the match did not get going"
            c.poll(0.05)
        # The running peer holds its table: a second process is refused and changes nothing.
        before = (store.path / "log").read_bytes()
        code, err = _resume(c, 1)
        assert code == EXIT_DATA, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert f"open in process {c.procs[1].proc.pid}" in lines[0]
        assert (store.path / "log").read_bytes()[: len(before)] == before
        # Killed, then its saved log changed: the resume names the log and the entry.
        c.kill(1)
        _tamper(store, 5)
        code, err = _resume(c, 1)
        assert code == EXIT_DATA, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert str(store.path / "log") in lines[0]
        assert "does not check" in lines[0]
