"""`verify A B`: two logs of one table, the first index where they differ, who wrote each log's
entry there, which log goes on where the other stops, and each log's own verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import identities, match_log

from buraco_p2p.cli import main
from buraco_p2p.logfile import decode_log, encode_log
from buraco_p2p.session import Entry, decode_entry, make_entry
from buraco_p2p.verify_compare import EXIT_DIFFER


def write(tmp_path: Path, name: str, wires: list[bytes]) -> str:
    path = tmp_path / name
    path.write_bytes(encode_log(wires))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["verify", "--jobs", "1", *argv])
    return code, capsys.readouterr().out


def doc_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out = run(capsys, "--json", *argv)
    return code, json.loads(out)


def resign(entry: Entry, body: dict[str, Any]) -> bytes:
    return make_entry(
        identities()[entry.author], table=entry.table, index=entry.index, prev=entry.prev,
        author=entry.author, kind=entry.kind, body=body,
    ).wire  # fmt: skip


def test_two_copies_of_a_fair_log_are_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wires = decode_log(match_log())
    a, b = write(tmp_path, "a.log", wires), write(tmp_path, "b.log", wires)
    code, out = run(capsys, a, b)
    assert code == 0
    assert out.startswith(f"the two logs hold the same {len(wires)} entries\n")
    assert "A (" in out and "B (" in out and out.count("fair match") == 2
    code, doc = doc_of(capsys, a, b)
    n = len(wires)
    assert (code, doc["result"], doc["entries"], doc["common"]) == (0, "same", [n, n], n)
    assert doc["at"] == [None, None] and doc["longer"] is None and doc["same_table"]
    assert [v["result"] for v in doc["logs"]] == ["fair", "fair"]


def test_a_log_that_stops_early_is_continued_by_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wires = decode_log(match_log())
    cut = next(i for i, w in enumerate(wires) if decode_entry(w).kind == "open") + 1
    short, full = write(tmp_path, "host.log", wires[:cut]), write(tmp_path, "bia.log", wires)
    nxt = decode_entry(wires[cut])
    code, doc = doc_of(capsys, short, full)
    assert code == EXIT_DIFFER
    assert (doc["result"], doc["common"], doc["entries"]) == ("differ", cut, [cut, len(wires)])
    assert doc["longer"] == 1 and doc["at"][0] is None and doc["same_table"]
    assert (doc["at"][1]["kind"], doc["at"][1]["author"]) == (nxt.kind, nxt.author)
    # each log's own verdict: the short one ends before the match result
    assert [v["result"] for v in doc["logs"]] == ["unfinished", "fair"]
    code, out = run(capsys, full, short)  # the other way round: A goes on
    assert code == EXIT_DIFFER
    first = out.splitlines()[0]
    assert first.startswith(f"the logs differ at entry {cut}: B (")
    assert "stops there, A (" in first and f"{nxt.kind!r} entry by party {nxt.author}" in first


def test_two_logs_that_part_at_an_entry_are_a_fork(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wires = decode_log(match_log())
    entries = [decode_entry(w) for w in wires]
    result = next(e for e in entries if e.kind == "result")
    forked = list(wires)
    forked[result.index] = resign(result, {**result.body, "state": bytes(32)})
    a, b = write(tmp_path, "a.log", wires), write(tmp_path, "b.log", forked)
    code, doc = doc_of(capsys, a, b)
    assert code == EXIT_DIFFER
    assert doc["common"] == result.index and doc["longer"] is None
    assert [(x["kind"], x["author"]) for x in doc["at"]] == [("result", result.author)] * 2
    assert doc["logs"][1]["result"] == "bad_entry" and doc["logs"][1]["index"] == result.index
    code, out = run(capsys, a, b)
    assert code == EXIT_DIFFER
    assert f"the logs differ at entry {result.index}, the match forked" in out.splitlines()[0]


def test_logs_of_two_tables_differ_from_their_first_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wires = decode_log(match_log())
    genesis = decode_entry(wires[0])
    other = resign(genesis, {**genesis.body, "timeout": genesis.body["timeout"] + 1})
    a = write(tmp_path, "a.log", wires)
    b = write(tmp_path, "b.log", [other, *wires[1:]])
    code, doc = doc_of(capsys, a, b)
    assert code == EXIT_DIFFER and doc["common"] == 0 and not doc["same_table"]
    code, out = run(capsys, a, b)
    assert out.startswith("the logs differ from their first entry: not one table's")


def test_a_file_that_is_not_a_log_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.log", decode_log(match_log()))
    missing = str(tmp_path / "missing.log")
    code, doc = doc_of(capsys, a, missing)
    assert code == 2 and doc["result"] == "not_a_log"
    assert doc["logs"][1]["result"] == "not_a_log" and "no such file" in doc["logs"][1]["reason"]
    code, out = run(capsys, missing, a)
    assert code == 2 and out.startswith("cannot compare the logs")
