"""`selfplay --network --minutes`: peer processes end a timed match together, on a fast
clock passed to them (a minute of the rule is 0.01 s of theirs), with byte-identical logs
that `verify` accepts as a complete match."""

from __future__ import annotations

from pathlib import Path

import pytest

from buraco_p2p.audit import verify_path
from buraco_p2p.cli import main
from buraco_p2p.logfile import decode_log
from buraco_p2p.session import replay


def test_selfplay_network_minutes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["selfplay", "--network", "--rules", "classic", "--players", "2",
                 "--minutes", "1", "--minute-seconds", "0.01", "--seed", "5",
                 "--log-dir", str(tmp_path), "--timeout", "240"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "byte-identical" in out and "fair" in out
    logs = sorted(tmp_path.glob("*.log"))
    assert len(logs) == 2 and len({p.read_bytes() for p in logs}) == 1
    assert verify_path(str(logs[0])).code == 0  # complete, not partial
    rep = replay(decode_log(logs[0].read_bytes()), require_closed=True)
    match = rep.table.match
    assert match is not None and match.time_is_up and rep.winner is not None
    # the minute passed during the first hand: one round of clocks, after it, said so
    clocks = [e for e in rep.table.log if e.kind == "time"]
    assert len(clocks) == 2 and all(e.body["ms"] >= 60_000 for e in clocks)
