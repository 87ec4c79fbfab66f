"""`resume` without a table: the list a person picks from. Unfinished and finished tables
apart, newest first by their log's time, each with its players, rules, hands and scores
(the table's summary), a second self's tables too (`play.selves`); the command that resumes
one names the directories given; a finished one offers `replay PATH` on a line of its own.
On standard output, exit 0: asking for the list is no error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from buraco_p2p.cli import main
from buraco_p2p.play.matchlog import log_path, save_log
from buraco_p2p.play.summary import Summary, load_summary, save_summary


def _table(root: Path, tid: str, when: int, summary: Summary | None) -> Path:
    d = root / "tables" / tid
    d.mkdir(parents=True)
    (d / "secret").write_bytes(b"x")
    (d / "log").write_bytes(b"x")
    if summary is not None:
        save_summary(d, summary)
    os.utime(d / "log", (when, when))
    return d


def test_resume_lists_unfinished_and_finished_tables_with_players_and_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, config = tmp_path / "data", tmp_path / "config"
    going, done, second, bare = "ab" * 16, "cd" * 16, "ef" * 16, "12" * 16
    players = ("Ana", "Bia", "Caio", "Duda")
    _table(data, going, 2_000_000_000, Summary(players, 1, "us", (120, 450), 2, False))
    _table(data, done, 1_900_000_000, Summary(players, 0, "classic", (2100, 1800), 5, True))
    kept = save_log(log_path(data, bytes.fromhex(done)), [], bytes.fromhex(done))
    assert kept.name == "cdcdcdcd.log"  # short enough for the command to fit 80 columns
    _table(data / "others" / "2", second, 1_950_000_000,
           Summary(("Ana", "Ana-2"), 1, "us", (0, 0), 0, False))  # fmt: skip
    _table(data, bare, 1_800_000_000, None)
    assert main(["resume", "--data-dir", str(data), "--config-dir", str(config)]) == 0
    said = capsys.readouterr()
    out = said.out
    assert said.err == ""
    unfinished, finished = out.split("Finished tables")
    assert going in unfinished and second in unfinished and bare in unfinished
    assert done in finished and done not in unfinished
    assert unfinished.index(going) < unfinished.index(second) < unfinished.index(bare)
    assert f"resume TABLE --config-dir {config} --data-dir {data}" in unfinished
    assert "us · hand 3 in play · you & Duda 450 · Ana & Caio 120" in unfinished
    assert "the second player on this machine, self 2" in unfinished
    assert "classic · 5 hands played · you & Caio 2100 · Bia & Duda 1800" in finished
    replay = [line.strip() for line in finished.splitlines() if " replay " in line]
    assert replay == [f"buraco-p2p replay {kept}"] or replay[0].endswith(f" replay {kept}")
    assert "last played 2033-" in unfinished  # the log's time, not the directory's


def test_a_damaged_summary_is_listed_by_its_id_alone(tmp_path: Path) -> None:
    d = _table(tmp_path, "ab" * 16, 2_000_000_000, None)
    (d / "summary").write_bytes(b"\xc1 not msgpack")
    assert load_summary(d) is None
    (d / "summary").write_bytes(b"\x81\xa7players\x91\xa1\x1b")  # control characters, 1 seat
    assert load_summary(d) is None


def test_where_every_table_is_over_resume_says_there_is_none_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    done = "cd" * 16
    _table(data, done, 1_900_000_000, Summary(("Ana", "Bia"), 0, "us", (2100, 1800), 2, True))
    assert main(["resume", "--data-dir", str(data), "--config-dir", str(tmp_path / "c")]) == 0
    first, *rest = capsys.readouterr().out.splitlines()
    assert first == f"No unfinished table to resume in {data}: every table kept there is over."
    assert rest[0].startswith("Finished tables") and done in rest[1]
