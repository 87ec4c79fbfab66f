"""Bot peer processes at a level: a strong bot killed while it plays (most of its time is
search) comes back from its data directory at the level it was started with, without being
told again, and the table's logs stay identical and fair."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from buraco_p2p.audit import verify_path
from buraco_p2p.play.botpeer import LEVEL_FILE, level_args
from buraco_p2p.play.cluster import Cluster


def test_level_args_name_only_what_is_given() -> None:
    assert level_args(None, None) == []
    assert level_args("strong", 0.5) == ["--bot-level", "strong", "--bot-think", "0.5"]


@pytest.mark.slow  # bot peer processes searching at two seconds a move
def test_a_strong_bot_killed_mid_match_resumes_at_its_level(tmp_path: Path) -> None:
    host_args = ["--rules", "classic", "--players", "2"]
    with Cluster(2, tmp_path / "d", tmp_path, seed=4, hands=1, host_args=host_args) as c:
        c.extra[1] = level_args("strong", 2.0)
        c.start()
        c.wait_line(1, "table", 60)
        saved = tmp_path / "d" / "peer-1" / LEVEL_FILE
        assert json.loads(saved.read_text()) == {"level": "strong", "think": 2.0}
        c.poll(random.Random(4).uniform(1.0, 3.0))
        c.kill(1)
        c.resume(1)  # no level given this time
        c.wait_line(1, "table", 60)
        c.wait_done(600)
    assert json.loads(saved.read_text()) == {"level": "strong", "think": 2.0}
    assert json.loads((tmp_path / "d" / "peer-0" / LEVEL_FILE).read_text())["level"] == "normal"
    logs = {c.log_path(i).read_bytes() for i in range(2)}
    assert len(logs) == 1
    assert verify_path(str(c.log_path(0)), partial=True).code == 0
