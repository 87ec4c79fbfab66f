"""`buraco-p2p selfplay` / `play`: deterministic per seed, JSON as documented, usage errors
exit with code 2 and say what is wrong."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from buraco_p2p.cli import main
from buraco_p2p.engine import LINE_NAMES

FAST = ["--rule", "target_score=800"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("preset", ["us", "fechado"])
def test_selfplay_text_is_deterministic_for_a_seed(
    capsys: pytest.CaptureFixture[str], preset: str
) -> None:
    args = ["selfplay", "--rules", preset, "--seed", "42", "--matches", "2", *FAST]
    code1, out1, _ = run(capsys, *args)
    code2, out2, _ = run(capsys, *args)
    assert code1 == code2 == 0
    assert out1 == out2
    assert out1.count("result: team") == 2
    assert "hand total" in out1 and "match score" in out1
    _, other, _ = run(
        capsys, "selfplay", "--rules", preset, "--seed", "43", "--matches", "2", *FAST
    )
    assert other != out1


def test_selfplay_json_has_the_documented_fields(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["selfplay", "--rules", "classic", "--seed", "7", "--matches", "2", "--json"]
    args += ["--bots", "heuristic,random", *FAST]
    code, out, _ = run(capsys, *args)
    assert code == 0
    doc = json.loads(out)
    assert doc["rules"] == "classic" and doc["seed"] == 7
    assert doc["overrides"] == {"target_score": 800}
    assert doc["bots"] == ["heuristic", "random", "heuristic", "random"]
    assert len(doc["matches"]) == 2
    wins = [0, 0]
    for i, match in enumerate(doc["matches"], 1):
        assert match["match"] == i
        running = [0, 0]
        for n, hand in enumerate(match["hands"], 1):
            assert hand["number"] == n
            assert set(hand["lines"]) == set(LINE_NAMES)
            for team in (0, 1):
                assert hand["totals"][team] == sum(v[team] for v in hand["lines"].values())
                running[team] += hand["totals"][team]
            assert hand["scores"] == running
            assert hand["end"] in ("went_out", "stock_exhausted")
            assert (hand["went_out"] is None) == (hand["end"] == "stock_exhausted")
            assert hand["moves"] > 0
        assert match["scores"] == running
        winner = match["winner"]
        assert winner in (0, 1)
        assert running[winner] >= 800 and running[winner] > running[1 - winner]
        wins[winner] += 1
    assert doc["summary"] == {"matches": 2, "wins": wins, "unfinished": 0}


def test_text_and_json_tell_the_same_games(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["selfplay", "--rules", "italian", "--seed", "5", *FAST]
    _, text, _ = run(capsys, *base)
    _, js, _ = run(capsys, *base, "--json")
    doc = json.loads(js)
    totals = [[int(a), int(b)] for a, b in re.findall(r"hand total\s+(-?\d+)\s+(-?\d+)", text)]
    assert totals == [h["totals"] for h in doc["matches"][0]["hands"]]


def test_play_prints_a_seed_that_selfplay_replays(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.urandom", lambda n: bytes(range(1, n + 1)))
    code, out, _ = run(capsys, "play", "--rules", "playingcards", *FAST)
    assert code == 0
    seed = int.from_bytes(bytes(range(1, 9)), "big")
    assert f"seed {seed}" in out
    assert f"selfplay --rules playingcards --rule target_score=800 --seed {seed}" in out
    _, replayed, _ = run(capsys, "selfplay", "--rules", "playingcards", "--seed", str(seed), *FAST)
    hands = out[out.index("  hand 1:") :]
    assert hands == replayed[replayed.index("  hand 1:") :]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rules", "nosuch"], "unknown rule preset 'nosuch'"),
        (["--rules", "us", "--rule", "going_out=sometimes"], "going_out"),
        (["--rules", "us", "--rule", "no_such_key=1"], "unknown rule 'no_such_key'"),
        (["--rules", "us", "--rule", "target_score"], "KEY=VALUE"),
        (["--rules", "us", "--bots", "heuristic,nobody"], "unknown bot 'nobody'"),
        (["--rules", "us", "--bots", "random,random,random"], "one, two or four"),
        (["--rules", "us", "--matches", "0"], "--matches"),
    ],
)
def test_bad_selfplay_arguments_exit_2_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "selfplay", "--seed", "1", *argv)
    assert code == 2
    assert out == ""
    assert "error" in err and message in err


@pytest.mark.parametrize(
    "argv",
    [
        ["selfplay", "--rules", "us", "--seed", "one"],
        ["selfplay", "--rules", "us"],
    ],
)
def test_unparsable_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_selfplay_without_rules_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "selfplay", "--seed", "1")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--rules" in err


def test_play_with_a_bad_preset_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "play", "--rules", "nosuch")
    assert code == 2 and out == "" and "unknown rule preset" in err


def test_the_installed_command_exits_2_on_a_bad_preset() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "buraco_p2p", "selfplay", "--rules", "nosuch", "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "unknown rule preset 'nosuch'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("players", [2, 3, 6])
@pytest.mark.parametrize("preset", ["us", "classic", "playingcards", "italian", "fechado"])
def test_selfplay_finishes_a_match_at_every_player_count(
    capsys: pytest.CaptureFixture[str], preset: str, players: int
) -> None:
    args = ["selfplay", "--rules", preset, "--seed", "3", "--players", str(players), "--json"]
    code, out, err = run(capsys, *args, "--rule", "target_score=1500")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["players"] == players and len(doc["bots"]) == players
    match = doc["matches"][0]
    sides = 2 if players == 2 else 3
    assert len(match["scores"]) == sides and match["winner"] in range(sides)
    assert match["scores"][match["winner"]] == max(match["scores"]) >= 1500
    for hand in match["hands"]:
        seated = sorted(s for side in hand["sides"] for s in side)
        assert seated == list(range(players))
        for i in range(len(hand["sides"])):
            assert hand["totals"][i] == sum(v[i] for v in hand["lines"].values())
        assert hand["scores"] == _expected_scores(match["hands"][: hand["number"]], players)
    assert match["scores"] == match["hands"][-1]["scores"]


def _expected_scores(hands: list[dict[str, object]], players: int) -> list[int]:
    """Match scores from the hands' side totals: per team, or per player at two and three."""
    sides = 2 if players == 2 else 3
    scores = [0] * sides
    for hand in hands:
        hand_sides = hand["sides"]
        totals = hand["totals"]
        assert isinstance(hand_sides, list) and isinstance(totals, list)
        if players in (2, 3):
            for i, side in enumerate(hand_sides):
                for seat in side:
                    scores[seat] += totals[i]
        else:
            for i, side in enumerate(hand_sides):
                scores[min(side) % sides] += totals[i]
    return scores


def test_selfplay_text_names_sides_at_three_players(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "selfplay", "--rules", "italian", "--seed", "2", "--players", "3")
    assert code == 0
    assert "took the first pot and played alone" in out and "seats " in out
    assert re.search(r"result: seat \d wins \d+ to \d+ and \d+ after", out)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "5"], "players=5: must be 2, 3, 4 or 6"),
        (["--players", "0"], "players=0: must be 2, 3, 4 or 6"),
        (["--rule", "players=5"], "players=5"),
        (["--rule", "teams=2"], "only a table of six players chooses its teams"),
        (["--players", "4", "--rule", "teams=2"], "only a table of six"),
        (["--players", "6", "--rule", "players=2"], "disagree"),
        (["--players", "2", "--bots", "random,random,random"], "one or two"),
    ],
)
def test_bad_player_counts_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "selfplay", "--rules", "classic", "--seed", "1", *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1
