"""`buraco-p2p replay --line`: the match as text, every move in the words of the seat's feed,
`verify`'s verdict and exit code, and one line for a command line the log cannot answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from replay_helpers import live_match

from buraco_p2p.audit import render_text, verify_bytes
from buraco_p2p.cli import main
from buraco_p2p.logfile import decode_log
from buraco_p2p.session import decode_entry, replay

PARTY = 2


@pytest.fixture(scope="module")
def log_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("line") / "match.log"
    path.write_bytes(live_match().log)
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", "--line", "--jobs", "1", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_hand_from_one_seat_in_its_feeds_words(
    log_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = live_match()
    seat = live.seating.index(PARTY)
    code, out, err = run(capsys, "--seat", str(seat), "--hand", "2", str(log_path))
    assert (code, err) == (0, "")
    assert out.count("\n== hand ") == 1 and "== hand 2, dealt by " in out
    moves = [m.group(1) for m in re.finditer(r"^ {1,3}\d+\. (.*)$", out, re.MULTILINE)]
    said = [lines[0] for lines in live.feeds[PARTY][_moves_in_hand_1(live.log) :]]
    assert moves == said
    assert re.search(rf"^  \S+ \(seat {seat}\): ", out, re.MULTILINE)
    others = [s for s in range(4) if s != seat]
    assert not any(re.search(rf"^  \S+ \(seat {s}\): ", out, re.MULTILINE) for s in others)
    assert "hand over:" in out and "  match: " in out


def _moves_in_hand_1(log: bytes) -> int:
    entries = [decode_entry(w) for w in decode_log(log)]
    second = [e.index for e in entries if e.kind == "keys"][4]
    return sum(1 for e in entries[:second] if e.kind == "move")


def test_the_whole_match_face_up_ends_with_the_story(
    log_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(log_path))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == "verify: fair match: match.log"
    assert out.count("\n== hand ") == 2 and out.count("stock, next first: ") == 2
    rep = replay(decode_log(live_match().log))
    assert lines[-1].endswith(f"(winner: {lines[-1].split(' (winner: ')[1]}")
    totals = sorted(rep.scores, reverse=True)
    assert re.findall(r" (\d+)(?: ·|$| \()", lines[-1])[:2] == [str(t) for t in totals]
    assert "the score's story" in lines


def test_a_byte_flipped_log_is_told_up_to_its_bad_entry(
    log_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = bytearray(log_path.read_bytes())
    data[len(data) * 3 // 4] ^= 0x10
    bad = tmp_path / "bad.log"
    bad.write_bytes(bytes(data))
    verdict = verify_bytes(bytes(data), name=str(bad))
    assert verdict.code == 1
    code, out, err = run(capsys, str(bad))
    assert (code, err) == (1, "")
    said = render_text(verdict.doc).splitlines()[0]
    assert out.splitlines()[1] == f"verify: {said}"
    assert f"the log stops here; verify: {said}" in out
    assert re.search(rf"(cut short|refused) at entry {verdict.doc['index']}\b", out)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seat", "9"], "--seat 9: this table has seats 0 to 3"),
        (["--seat", "nobody"], "--seat 'nobody': no player by that nickname"),
        (["--hand", "0"], "--hand counts deals from 1, not 0"),
        (["--hand", "7"], "--hand 7: the log holds 2 deals"),
        (["--jobs", "x"], "--jobs takes a whole number of processes"),
    ],
)
def test_a_seat_or_hand_the_log_has_not_is_one_line_and_exit_2(
    args: list[str], says: str, log_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *args, str(log_path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"buraco-p2p replay: {says}"), err


def test_a_player_by_nickname_is_their_seat(
    log_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = live_match()
    seat = live.seating.index(PARTY)
    by_name = run(capsys, "--seat", live.nicknames[PARTY], str(log_path))
    by_seat = run(capsys, "--seat", str(seat), str(log_path))
    assert by_name == by_seat and by_name[0] == 0
    assert f"as {live.nicknames[PARTY]} saw it" in by_name[1].splitlines()[0]
