"""`resume TABLE` in line mode and on the full screen: one check of the table id and its
directory, the same refusal for the same bad input, before any identity or node is opened."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from buraco_p2p.play.hostjoin import _resume_screen
from buraco_p2p.play.local import DamagedTable, ResumeError, resume_line, resume_target
from buraco_p2p.play.store import TableMeta, TableStore

CLIENTS: list[Callable[[argparse.Namespace], int]] = [resume_line, _resume_screen]


def _args(table: str, root: Path) -> argparse.Namespace:
    """The command's arguments, with a config directory of the test's own (the user's would
    be shared with every other client and test run on this machine)."""
    return argparse.Namespace(table=table, data_dir=str(root), config_dir=str(root / "config"),
                              ascii=True)  # fmt: skip


def test_a_saved_table_is_found(tmp_path: Path) -> None:
    table = bytes(range(16))
    TableStore.for_table(table, tmp_path).create(TableMeta(b"invite", False, 0, 0), None)
    assert resume_target(_args(table.hex().upper(), tmp_path)) == (tmp_path, table)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("damaged", ["table", "secret"])
def test_a_damaged_table_file_is_named_before_anything_starts(
    client: Callable[[argparse.Namespace], int], damaged: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    table = bytes(range(16))
    store = TableStore.for_table(table, tmp_path)
    store.create(TableMeta(b"invite", False, 0, 0), None)
    (store.path / damaged).write_bytes(b"\xc1 not msgpack")
    with pytest.raises(DamagedTable, match=f"{damaged}: not msgpack"):
        resume_target(_args(table.hex(), tmp_path))
    assert client(_args(table.hex(), tmp_path)) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"buraco-p2p resume: error: table {table.hex()} in {tmp_path}: ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("client", CLIENTS)
def test_a_table_id_not_in_hex_is_a_usage_error(
    client: Callable[[argparse.Namespace], int], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    with pytest.raises(ResumeError, match="TABLE is a table id in hex"):
        resume_target(_args("not-hex", tmp_path))
    assert client(_args("not-hex", tmp_path)) == 2
    assert capsys.readouterr().err == "buraco-p2p resume: error: TABLE is a table id in hex\n"


@pytest.mark.parametrize("client", CLIENTS)
def test_a_table_without_its_secret_is_not_resumed(
    client: Callable[[argparse.Namespace], int], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    table = "00ff" * 8
    (tmp_path / "tables" / table).mkdir(parents=True)  # a directory, but no secret in it
    assert client(_args(table, tmp_path)) == 2
    assert capsys.readouterr().err == f"buraco-p2p resume: error: no table {table} in {tmp_path}\n"
