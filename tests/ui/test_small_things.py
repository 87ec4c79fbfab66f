"""Small things a person trips on: `resume` without a table lists the saved ones and its help
says what it opens; the printed verify command runs from any shell; an address that is not
this machine's is refused in one line before the screen opens; saved logs go with the data."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from buraco_p2p.cli import build_parser, main
from buraco_p2p.net.mesh.commands import UsageError
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
    assert main(["resume", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert newer in err and older in err and err.index(newer) < err.index(older)
    assert f"buraco-p2p resume {newer}" in err
    assert main(["resume", "--data-dir", str(tmp_path / "empty")]) == 2
    assert "no saved table" in capsys.readouterr().err


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


def test_a_listen_address_not_of_this_machine_is_one_line_before_the_screen() -> None:
    args = argparse.Namespace(port=0, listen="10.9.9.9")
    with pytest.raises(UsageError, match="not one of this machine's") as err:
        check_address(args)
    assert "\n" not in str(err.value)
