"""A peer that does not come back: after the table's timeout the others agree, signed and in
the log, to end the match; their logs are identical and the audit accepts them.

The present parties may stop at different entries when they agree (the killed peer's last
entry may have reached some of them only); they still close one agreement at one point."""

from __future__ import annotations

from pathlib import Path

from buraco_p2p.audit import verify_path
from buraco_p2p.logfile import decode_log
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.session import decode_entry


def test_a_peer_gone_for_good_ends_the_match_by_signed_agreement(tmp_path: Path) -> None:
    with Cluster(4, tmp_path / "d", tmp_path, seed=11,
                 peer_args=["--timeout-ms", "3000", "--void", "end"]) as c:  # fmt: skip
        c.start()
        # wait until the first hand is under way (the host's log past the deal), then kill
        host_dir = c.root / "peer-0" / "tables"
        for _ in range(600):
            c.poll(0.2)
            logs = list(host_dir.glob("*/log"))
            if logs and len(decode_log(logs[0].read_bytes())) > 60:
                break
        c.kill(3)
        c.skip.add(3)
        c.wait_done(300)
    logs = {c.log_path(i).read_bytes() for i in range(3)}
    assert len(logs) == 1
    wires = decode_log(logs.pop())
    voids = [decode_entry(w) for w in wires if decode_entry(w).kind == "void"]
    assert voids and {v.body["action"] for v in voids} == {"end"}
    silent = {tuple(v.body["silent"]) for v in voids}
    assert len(silent) == 1
    assert verify_path(str(c.log_path(0))).code == 0
