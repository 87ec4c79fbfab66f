"""The command line end to end: `selfplay --log` writes a log that `verify` accepts; the first
hands of a match are reported as an unfinished match (exit 4, nobody named as bad), and pass
with `--partial`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buraco_p2p.audit import EXIT_UNFINISHED
from buraco_p2p.cli import main


def test_the_first_hand_of_a_selfplay_log_verifies_as_partial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "first.log"
    args = ["selfplay", "--rules", "us", "--seed", "11", "--log", str(path), "--hands", "1"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["verify", str(path)]) == EXIT_UNFINISHED == 4
    out = capsys.readouterr().out
    assert out.startswith("unfinished match") and "BAD" not in out
    assert "no charge against anyone" in out
    assert main(["verify", "--json", str(path)]) == EXIT_UNFINISHED
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "unfinished" and doc["ending"]["how"] == "unfinished"
    assert doc["ending"]["phase"] == "hand_keys" and len(doc["ending"]["waiting_for"]) == 4
    assert main(["verify", "--partial", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "fair" and doc["complete"] is False
    assert doc["hands"] == doc["hands_opened"] == 1 and doc["shuffles_verified"] == 4
