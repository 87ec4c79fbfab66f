"""A peer that does not come back: after the table's timeout the others agree, signed and in
the log, to end the match; their logs are identical and the audit accepts them.

The present parties may stop at different entries when they agree (the killed peer's last
entry may have reached some of them only); they still close one agreement at one point."""

from __future__ import annotations

from pathlib import Path

from buraco_p2p.audit import verify_path

from .lost import hand_under_way, lose, one_log, voids


def test_a_peer_gone_for_good_ends_the_match_by_signed_agreement(tmp_path: Path) -> None:
    with hand_under_way(tmp_path, seed=11, void="end", timeout_ms=3000) as c:
        lose(c, 3)
        c.wait_done(300)
    rounds = voids(one_log([c.log_path(i) for i in range(3)]))
    assert rounds and {v.body["action"] for v in rounds} == {"end"}
    silent = {tuple(v.body["silent"]) for v in rounds}
    assert len(silent) == 1
    assert verify_path(str(c.log_path(0))).code == 0
