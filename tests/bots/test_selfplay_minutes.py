"""`--minutes M`: a match of a fixed length in time, on a clock the test passes in (no test
sleeps or reads the wall clock)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from buraco_p2p.bots import HeuristicBot, play_match
from buraco_p2p.bots.selfplay import match_rng
from buraco_p2p.cli import build_parser, main
from buraco_p2p.logfile import decode_log
from buraco_p2p.rules import get_preset
from buraco_p2p.session import replay


def fake_clock(step: float) -> Callable[[], float]:
    """A clock that moves `step` seconds on at every reading."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


def run_with_clock(capsys: pytest.CaptureFixture[str], clock: Callable[[], float],
                   *argv: str) -> tuple[int, str, str]:  # fmt: skip
    args = build_parser().parse_args(list(argv))
    args.clock = clock
    code: int = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def _tied_after(hands: list[dict[str, object]], k: int) -> bool:
    scores = hands[k - 1]["scores"]
    assert isinstance(scores, list)
    return scores.count(max(scores)) > 1


def test_selfplay_minutes_ends_with_the_hand_in_progress(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # One reading at the start and one after each hand, 25 s apart: the time (1 minute) is
    # up during the third hand, so the match ends with it (unless the lead is then tied).
    code, out, _ = run_with_clock(capsys, fake_clock(25.0), "selfplay", "--rules", "classic",
                                  "--seed", "4", "--minutes", "1", "--json")  # fmt: skip
    assert code == 0
    match = json.loads(out)["matches"][0]
    hands = match["hands"]
    assert len(hands) >= 3 and match["winner"] is not None
    assert all(_tied_after(hands, k) for k in range(3, len(hands)))
    assert not _tied_after(hands, len(hands))
    # the same seed on a slower clock plays more hands: the length is the clock's
    code, out, _ = run_with_clock(capsys, fake_clock(12.0), "selfplay", "--rules", "classic",
                                  "--seed", "4", "--minutes", "1", "--json")  # fmt: skip
    assert len(json.loads(out)["matches"][0]["hands"]) >= 5


def test_the_target_plays_no_part_in_a_timed_match() -> None:
    rules = get_preset("classic").with_overrides({"minutes": 1, "target_score": 100})
    record = play_match(rules, [HeuristicBot()] * 4, match_rng(1, 1), clock=fake_clock(70.0))
    assert len(record.hands) >= 1 and record.winner is not None
    scores = list(record.scores)
    assert scores.count(max(scores)) == 1
    with pytest.raises(ValueError, match="needs a clock"):
        play_match(rules, [HeuristicBot()] * 4, match_rng(1, 1))


def test_selfplay_log_minutes_is_a_log_verify_accepts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The in-memory session peers read the clock between deliveries: 0.04 s a reading makes
    # the minute pass after 1,500 deliveries, in the first hands of a two-player match.
    path = tmp_path / "timed.log"
    code, out, _ = run_with_clock(capsys, fake_clock(0.04), "selfplay", "--rules", "classic",
                                  "--players", "2", "--seed", "3", "--minutes", "1",
                                  "--log", str(path))  # fmt: skip
    assert code == 0, out
    wires = decode_log(path.read_bytes())
    rep = replay(wires, require_closed=True)
    assert rep.table.match is not None and rep.table.match.time_is_up
    clocks = [e for e in rep.table.log if e.kind == "time"]
    assert clocks and all(e.body["ms"] >= 60_000 for e in clocks[-2:])
    assert all(e.body["ms"] < 60_000 for e in clocks[:-2])
    assert main(["verify", str(path)]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--minutes", "-1"], "minutes"),
        (["--minutes", "1441"], "minutes"),
        (["--minutes", "5", "--rule", "minutes=6"], "disagree"),
    ],
)
def test_bad_minutes_exit_2(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    for command in (["selfplay", "--seed", "1"], ["play"], ["host"]):
        code = main([*command, "--rules", "classic", *extra])
        err = capsys.readouterr().err
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_minutes_with_network_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["selfplay", "--network", "--log-dir", str(tmp_path), "--seed", "1",
                 "--minutes", "3000"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "minutes=3000" in err and len(err.strip().splitlines()) == 1
