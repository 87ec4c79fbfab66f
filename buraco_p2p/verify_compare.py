"""`buraco-p2p verify A B`: two logs of one table, compared entry by entry, and each audited.

Every player keeps the whole log of a table, so two players' files of one match hold the same
entries, or one stops where the other goes on (a player left before the last entries reached
it), or they part at some entry: the match forked, and the two cannot both be the match. This
says which, where (the first index at which the files differ: each file's entry there, its
author and kind), and each file's own verdict (`buraco_p2p.audit`).

Exit codes: 0 the two files hold the same entries and the match is fair; 1 the same entries,
with a bad one (the verdict names it); 3 the files differ (one goes on where the other stops,
or they part at an entry, or they are of different tables), whatever their own verdicts; 2
either file is not a match log, or the command line is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from buraco_p2p.logfile import LogFileError, decode_log
from buraco_p2p.session import LogError, decode_entry, parse_genesis

__all__ = ["EXIT_DIFFER", "Verdict", "compare_logs", "divergence", "render_comparison"]

EXIT_DIFFER: Final = 3
_EXIT_NOT_A_LOG: Final = 2
_NAMES: Final = ("A", "B")


class Verdict(Protocol):
    """One file's own audit (`buraco_p2p.audit.Verdict`)."""

    @property
    def code(self) -> int: ...

    @property
    def doc(self) -> dict[str, Any]: ...


def compare_logs(
    paths: tuple[str, str],
    *,
    load: Callable[[str], bytes],
    verify: Callable[[bytes, str], Verdict],
    render: Callable[[dict[str, Any]], str],
    as_json: bool = False,
) -> tuple[int, str]:
    """The exit code and the output (one JSON document, or text) of `verify A B`.

    `load` reads a file (raising, with a one-line reason, for one that cannot be a log),
    `verify` audits a file's bytes, `render` is the text of one verdict document.
    """
    datas: list[bytes | None] = []
    verdicts: list[dict[str, Any]] = []
    codes: list[int] = []
    for path in paths:
        try:
            data = load(path)
        except Exception as exc:  # the loader's own refusal: the file is not a log
            datas.append(None)
            verdicts.append({"result": "not_a_log", "reason": str(exc)})
            codes.append(_EXIT_NOT_A_LOG)
            continue
        datas.append(data)
        if len(datas) == 2 and datas[0] == data:
            verdicts.append(verdicts[0])  # the same bytes: the same verdict, audited once
            codes.append(codes[0])
            continue
        verdict = verify(data, path)
        verdicts.append(verdict.doc)
        codes.append(verdict.code)
    doc: dict[str, Any] = {"files": list(paths), "logs": verdicts}
    a, b = datas
    wires = [_wires(a), _wires(b)]
    if a is None or b is None or wires[0] is None or wires[1] is None:
        doc["result"] = "not_a_log"
        code = _EXIT_NOT_A_LOG
    else:
        differ = divergence(wires[0], wires[1])
        if differ is None:
            # the same keys as a difference, so one reader reads both (4.8): nothing parts
            n = len(wires[0])
            doc.update(result="same", common=n, entries=[n, n], at=[None, None], longer=None,
                       same_table=n > 0)  # fmt: skip
            code = codes[0]
        else:
            doc["result"] = "differ"
            doc.update(differ)
            code = EXIT_DIFFER
    if as_json:
        return code, json.dumps(doc, indent=1, sort_keys=True) + "\n"
    return code, render_comparison(doc, render)


def _wires(data: bytes | None) -> list[bytes] | None:
    if data is None:
        return None
    try:
        return decode_log(data)
    except LogFileError:
        return None


def divergence(a: Sequence[bytes], b: Sequence[bytes]) -> dict[str, Any] | None:
    """None if the two logs hold the same entries; else where they part: `common` (the
    entries both hold, the index of the first that differs), each log's length, each log's
    entry at that index (None where the log has stopped), `longer` (0 or 1: the log that goes
    on where the other stops; None when both have an entry there: a fork), and whether they
    are of one table (the same genesis)."""
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    if common == len(a) == len(b):
        return None
    at = [_describe(log, common) for log in (a, b)]
    longer = None
    if at[0] is None:
        longer = 1
    elif at[1] is None:
        longer = 0
    return {
        "common": common,
        "entries": [len(a), len(b)],
        "at": at,
        "longer": longer,
        "same_table": common > 0,
    }


def _describe(log: Sequence[bytes], index: int) -> dict[str, Any] | None:
    """A log's entry at `index`: its kind and author (with the author's nickname from the
    log's own genesis), or why it cannot be read."""
    if index >= len(log):
        return None
    try:
        entry = decode_entry(log[index])
    except LogError as exc:
        return {"index": index, "unreadable": exc.reason}
    out: dict[str, Any] = {"index": index, "kind": entry.kind, "author": entry.author}
    try:
        terms = parse_genesis(decode_entry(log[0]))
    except LogError:
        return out
    if 0 <= entry.author < terms.parties:
        out["author_nickname"] = terms.nicknames[entry.author]
    return out


def _entry_text(at: dict[str, Any]) -> str:
    if "unreadable" in at:
        return f"an entry that cannot be read ({at['unreadable']})"
    who = f"party {at['author']}"
    if "author_nickname" in at:
        who += f" ({at['author_nickname']})"
    return f"a {at['kind']!r} entry by {who}"


def render_comparison(doc: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> str:
    """The human text of a comparison: what differs (if anything), then each file's verdict
    (`render` gives the text of one)."""
    files = doc["files"]
    names = [f"{n} ({f})" for n, f in zip(_NAMES, files, strict=True)]
    lines: list[str] = []
    result = doc["result"]
    if result == "same":
        lines.append(f"the two logs hold the same {doc['common']} entries")
    elif result == "differ":
        k = doc["common"]
        a, b = doc["at"]
        sizes = f"A has {doc['entries'][0]} entries, B {doc['entries'][1]}"
        if not doc["same_table"]:
            lines.append(f"the logs differ from their first entry: not one table's ({sizes})")
        elif doc["longer"] is not None:
            on, off = doc["longer"], 1 - doc["longer"]
            lines.append(
                f"the logs differ at entry {k}: {names[off]} stops there, {names[on]} goes on "
                f"with {_entry_text(doc['at'][on])} ({sizes})"
            )
        else:
            lines.append(
                f"the logs differ at entry {k}, the match forked: {names[0]} has "
                f"{_entry_text(a)}, {names[1]} has {_entry_text(b)} ({sizes}; the first {k} "
                "are the same)"
            )
    else:
        lines.append("cannot compare the logs: not a match log")
    text = "\n".join(lines) + "\n"
    for name, verdict in zip(names, doc["logs"], strict=True):
        own = render(verdict).rstrip("\n").replace("\n", "\n  ")
        text += f"{name}: {own}\n"
    return text
