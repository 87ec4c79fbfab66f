"""`buraco-p2p play`: full screen on a terminal; without one, a printed bot match that ends
by itself (so `python3 bootstrap.py play | head` never hangs); bad arguments exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from buraco_p2p.cli import main


def test_without_a_terminal_play_prints_a_bot_match_for_the_seed_and_ends() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "buraco_p2p", "play", "--seed", "9", "--rule", "target_score=400"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "seed 9" in done.stdout
    assert "selfplay --rules us --rule target_score=400 --seed 9" in done.stdout
    assert "result: team" in done.stdout
    again = subprocess.run(
        [sys.executable, "-m", "buraco_p2p", "selfplay", "--rules", "us", "--seed", "9",
         "--rule", "target_score=400"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.stdout[done.stdout.index("  hand 1:") :] == again.stdout[
        again.stdout.index("  hand 1:") :
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rules", "nosuch"], "unknown rule preset 'nosuch'"),
        (["--players", "5"], "players"),
        (["--bot-delay", "-1"], "--bot-delay"),
        (["--rule", "target_score"], "KEY=VALUE"),
    ],
)
def test_bad_play_arguments_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main(["play", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("buraco-p2p play: error: ") and message in err
    assert err.count("\n") == 1
