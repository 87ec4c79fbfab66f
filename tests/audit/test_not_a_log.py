"""`buraco-p2p verify` on files that are not match logs: exit 2, one line saying why, nothing
read past the size limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buraco_p2p import audit
from buraco_p2p.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["verify", *argv])
    out, _ = capsys.readouterr()
    return code, out


def test_a_missing_file_is_not_a_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = run(capsys, str(tmp_path / "nothing.log"))
    assert code == 2
    assert out.startswith("not a match log:") and "no such file" in out


def test_a_directory_is_not_a_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = run(capsys, str(tmp_path))
    assert code == 2
    assert "directory" in out


def test_an_empty_file_is_not_a_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    code, out = run(capsys, str(path), "--json")
    assert code == 2
    doc = json.loads(out)
    assert doc["result"] == "not_a_log" and "empty" in doc["reason"]


def test_a_file_over_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"\x00" * 1001)
    with pytest.raises(audit.NotALog, match="larger than 1000 bytes"):
        audit.read_bounded(str(path), limit=1000)
    assert audit.read_bounded(str(path), limit=1001) == b"\x00" * 1001


@pytest.mark.parametrize(
    "content",
    [b"hello, world\n", b"\xc1", b"\x93\x01\x02", b"\x81\xa1v\x01" * 3],
    ids=["text", "not msgpack", "an array", "maps"],
)
def test_bytes_that_are_not_a_log_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "junk.log"
    path.write_bytes(content)
    code, out = run(capsys, str(path))
    assert code == 2, out
    assert out.startswith("not a match log:")
