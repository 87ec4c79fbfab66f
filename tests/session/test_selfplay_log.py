"""`buraco-p2p selfplay --log FILE [--hands N]`: four in-memory session peers write the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from buraco_p2p import cli
from buraco_p2p.logfile import decode_log
from buraco_p2p.session import Table, decode_entry


def test_the_first_hand_is_written_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "match.log"
    assert cli.main(["selfplay", "--rules", "classic", "--seed", "3", "--log", str(path),
                     "--hands", "1"]) == 0  # fmt: skip
    assert "1 hands" in capsys.readouterr().out
    wires = decode_log(path.read_bytes())
    t = Table(decode_entry(wires[0]))
    for w in wires[1:]:
        t.apply(decode_entry(w))
    assert t.hands_played == 1 and t.phase.value == "hand_keys" and len(t.opened) == 1
    # the same seed writes the same bytes
    again = tmp_path / "again.log"
    assert cli.main(["selfplay", "--rules", "classic", "--seed", "3", "--log", str(again),
                     "--hands", "1"]) == 0  # fmt: skip
    assert again.read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    "extra",
    [["--hands", "1"], ["--log", "x.log", "--hands", "0"], ["--log", "x.log", "--matches", "2"]],
)
def test_usage_errors(extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["selfplay", "--rules", "us", "--seed", "1", *extra]
    assert cli.main(args) == 2
    assert not (tmp_path / "x.log").exists()
