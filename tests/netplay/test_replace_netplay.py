"""A person who does not come back is replaced by a bot over the network: after the table's
timeout the host proposes "replace" with a new identity, the present parties sign it, the
host frees the seat and starts a bot peer that fetches the log, follows it as an heir and
plays the seat from the hand dealt again; the match ends with identical logs everywhere."""

from __future__ import annotations

import time
from pathlib import Path

from buraco_p2p.audit import render_text, verify_path
from buraco_p2p.logfile import decode_log
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.session import decode_entry, parse_genesis

GONE = 3


def test_a_peer_gone_for_good_is_replaced_by_a_bot_and_the_match_ends(tmp_path: Path) -> None:
    with Cluster(4, tmp_path / "d", tmp_path, seed=21,
                 host_args=["--rule", "target_score=300"],
                 peer_args=["--timeout-ms", "5000", "--void", "replace"]) as c:  # fmt: skip
        c.start()
        host_dir = c.root / "peer-0" / "tables"
        for _ in range(600):
            c.poll(0.2)
            logs = list(host_dir.glob("*/log"))
            if logs and len(decode_log(logs[0].read_bytes())) > 60:
                break
        c.kill(GONE)
        c.skip.add(GONE)
        c.wait_done(240)
        deadline = time.monotonic() + 60
        heirs: list[Path] = []
        while not heirs and time.monotonic() < deadline:
            c.poll(0.2)
            heirs = sorted(tmp_path.glob("peer-0-heir-*.log"))
        assert len(heirs) == 1, sorted(tmp_path.iterdir())
    paths = [c.log_path(i) for i in range(4) if i != GONE] + heirs
    datas = {p.read_bytes() for p in paths}
    assert len(datas) == 1
    wires = decode_log(datas.pop())
    entries = [decode_entry(w) for w in wires]
    voids = [e for e in entries if e.kind == "void"]
    assert voids and {e.body["action"] for e in voids} == {"replace"}
    (silent,) = {tuple(e.body["silent"]) for e in voids}
    (keys,) = {tuple(e.body["keys"]) for e in voids}
    assert len(silent) == 1 and len(keys) == 1
    party = silent[0]
    old = parse_genesis(entries[0]).keys[party]
    assert old.raw != keys[0]
    # the seat plays on, signed by the new key, from after the round
    last_void = max(e.index for e in voids)
    later = [e for e in entries[last_void + 1 :] if e.author == party]
    assert later and entries[-1].kind == "final"
    for p in paths:
        verdict = verify_path(str(p))
        assert verdict.code == 0, render_text(verdict.doc)
        (s,) = verdict.doc["successions"]
        assert s["party"] == party and s["from_index"] == last_void + 1
        assert s["old_fingerprint"] == old.fingerprint()
        assert s["new_fingerprint"] != old.fingerprint()
        assert "succession: party" in render_text(verdict.doc)


def test_without_the_host_nobody_seats_a_bot_and_the_match_ends(tmp_path: Path) -> None:
    """Only the host can free a seat and let a new key in: with the host gone, the bots
    that would replace propose to end the match instead."""
    with Cluster(4, tmp_path / "d", tmp_path, seed=23,
                 peer_args=["--timeout-ms", "3000", "--void", "replace"]) as c:  # fmt: skip
        c.start()
        host_dir = c.root / "peer-1" / "tables"
        for _ in range(600):
            c.poll(0.2)
            logs = list(host_dir.glob("*/log"))
            if logs and len(decode_log(logs[0].read_bytes())) > 60:
                break
        c.kill(0)
        c.skip.add(0)
        c.wait_done(240)
    datas = {c.log_path(i).read_bytes() for i in range(1, 4)}
    assert len(datas) == 1
    entries = [decode_entry(w) for w in decode_log(datas.pop())]
    voids = [e for e in entries if e.kind == "void"]
    assert voids and {e.body["action"] for e in voids} == {"end"}
    assert {tuple(e.body["silent"]) for e in voids} == {(0,)}
    assert not list(tmp_path.glob("*heir*"))
    assert verify_path(str(c.log_path(1))).code == 0
