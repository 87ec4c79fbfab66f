"""Small things a person trips on: `resume` without a table lists the saved ones and its help
says what it opens; the printed verify command runs from any shell; an address that is not
this machine's is refused in one line before the screen opens; saved logs go with the data."""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_p2p.cli import build_parser, main
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.commands import UsageError
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.ui.driver_feed import verify_program
from buraco_p2p.ui.netplay import check_address


def test_resume_without_a_table_lists_the_saved_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older, newer = "ab" * 16, "cd" * 16
    for name in (older, newer):
        (tmp_path / "tables" / name).mkdir(parents=True)
        (tmp_path / "tables" / name / "secret").write_bytes(b"x")
    os.utime(tmp_path / "tables" / older, (1_000_000, 1_000_000))
    assert main(["resume", "--data-dir", str(tmp_path)]) == 0
    said = capsys.readouterr()
    out = said.out
    assert not said.err and "error" not in out
    assert newer in out and older in out and out.index(newer) < out.index(older)
    assert f"resume TABLE --data-dir {tmp_path}" in out
    assert main(["resume", "--data-dir", str(tmp_path / "empty")]) == 0
    assert "no saved table" in capsys.readouterr().out


def test_resume_help_says_it_opens_the_full_screen() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    resume = sub.choices["resume"]
    text = resume.format_help()
    assert "full-screen" in text and "lists the saved" in text
    summary = parser.format_help().split("resume", 1)[1].split("\n")[0]
    assert "full screen" in summary and "(line mode)" not in summary


def test_the_verify_command_shown_after_saving_runs() -> None:
    done = subprocess.run([*shlex.split(verify_program()), "verify", "--help"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={k: v for k, v in os.environ.items() if k != "PATH"}
                          | {"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "LOGFILE" in done.stdout


NOT_OURS = "10.9.9.9"


def _not_ours() -> None:
    """Skip where this machine has NOT_OURS (binding to it sends nothing)."""
    with socket.socket() as probe:
        try:
            probe.bind((NOT_OURS, 0))
        except OSError:
            return
    pytest.skip(f"{NOT_OURS} is one of this machine's addresses")


@pytest.mark.parametrize("command", ["join", "host"])
def test_line_mode_refuses_a_listen_address_not_ours_in_one_line_before_anything(
    tmp_path: Path, command: str
) -> None:
    _not_ours()
    args = [command, "--line", "--listen", NOT_OURS, "--config-dir", str(tmp_path / "me"),
            "--data-dir", str(tmp_path / "data")]  # fmt: skip
    if command == "join":
        key = Identity.generate("x").public.raw
        args.append(Invite(bytes(16), bytes(16), key, (Endpoint.parse("127.0.0.1", 9),)).to_text())
    command_line = [sys.executable, "-m", "buraco_p2p", *args]
    done = subprocess.run(command_line, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""  # nothing printed before the refusal ("joining as ...")
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not one of this machine's" in lines[0], done.stderr


def test_a_listen_address_not_of_this_machine_is_one_line_before_the_screen() -> None:
    args = argparse.Namespace(port=0, listen="10.9.9.9")
    with pytest.raises(UsageError, match="not one of this machine's") as err:
        check_address(args)
    assert "\n" not in str(err.value)
