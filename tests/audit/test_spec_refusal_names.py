"""docs/protocol.md 4.8 ("Refusals and their names") names every refusal of a log entry, so
that a second verifier can match `verify`: each error class of the session is in its table,
and for logs changed in many ways, the name and reason `verify --json` prints match a row."""

from __future__ import annotations

import ast
import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import identities, match_log

from buraco_p2p.audit import EXIT_BAD_ENTRY
from buraco_p2p.cli import main
from buraco_p2p.logfile import decode_log, encode_log
from buraco_p2p.session import Entry, decode_entry, errors, make_entry

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def _rows() -> list[tuple[str, str, list[re.Pattern[str]]]]:
    """(name, names-column, reason patterns) of every row of the table."""
    start = SPEC.index("#### Refusals and their names")
    text = SPEC[start : SPEC.index("### 4.9 ", start)]
    rows = []
    for line in text.splitlines():
        m = re.fullmatch(r"\| `(\w+)` \| [^|]+ \| ([^|]+) \| (.+) \|", line)
        if m is None:
            continue
        pats = [_pattern(p) for p in re.findall(r"`([^`]+)`", m.group(3))]
        rows.append((m.group(1), m.group(2), pats))
    return rows


def _pattern(text: str) -> re.Pattern[str]:
    """A reason pattern of the table: `<...>` (or `<code>`) is any text, the rest literal."""
    parts = re.split(r"<[a-z.]+>", text)
    return re.compile(".+".join(re.escape(p) for p in parts), re.S)


ROWS = _rows()


def test_every_error_class_of_the_session_has_a_row() -> None:
    classes = {
        name for name in errors.__all__
        if issubclass(getattr(errors, name), errors.LogError)
        and getattr(errors, name) is not errors.LogError
    }  # fmt: skip
    assert classes == {name for name, _, _ in ROWS}


def test_the_patterns_are_patterns_of_reasons() -> None:
    assert len(ROWS) >= 15
    for _, _, pats in ROWS:
        assert pats


def _entries() -> list[Entry]:
    return [decode_entry(w) for w in decode_log(match_log())]


def _first(kind: str, pred: Callable[[Entry], bool] = lambda e: True) -> Entry:
    return next(e for e in _entries() if e.kind == kind and pred(e))


def _resign(entry: Entry, signer: int | None = None, **changes: Any) -> bytes:
    fields: dict[str, Any] = {
        "table": entry.table, "index": entry.index, "prev": entry.prev,
        "author": entry.author, "kind": entry.kind, "body": dict(entry.body),
    }  # fmt: skip
    fields.update(changes)
    who = fields["author"] if signer is None else signer
    return make_entry(identities()[who], **fields).wire


def _at(index: int, wire: bytes) -> bytes:
    wires = decode_log(match_log())
    wires[index] = wire
    return encode_log(wires)


def _flip_sig(e: Entry) -> bytes:
    sig = e.sig[-1] if isinstance(e.sig, tuple) else e.sig  # the genesis: the last party's
    w = bytearray(e.wire)
    w[e.wire.index(sig) + 7] ^= 1
    return bytes(w)


def move() -> Entry:
    """The first discard of the match."""
    return _first("move", lambda e: e.body["m"][0] == 5)


def res() -> Entry:
    return _first("result")


def _mutants() -> dict[str, tuple[Callable[[], bytes], str, str | None]]:
    """name: (the changed log, the error expected, a text the reason must hold)."""
    return {
        "not msgpack": (lambda: _at(3, b"\xc1"), "MalformedEntry", "canonical msgpack"),
        "bad body": (
            lambda: _at(res().index, _resign(res(), body={"totals": [0, 0]})),
            "MalformedEntry",
            "body keys",
        ),
        "bad move wire": (
            lambda: _at(move().index, _resign(move(), body={**move().body, "m": [99]})),
            "MalformedEntry",
            "bad move",
        ),
        "other table": (
            lambda: _at(3, _resign(_entries()[3], table=bytes(16))),
            "WrongTable",
            None,
        ),
        "index": (
            lambda: _at(3, _resign(_entries()[3], index=4)),
            "BrokenChain",
            "the log is at",
        ),
        "prev": (
            lambda: _at(3, _resign(_entries()[3], prev=bytes(32))),
            "BrokenChain",
            "previous",
        ),
        "author": (lambda: _at(1, _resign(_entries()[1], author=2)), "OutOfTurn", "turn"),
        "kind": (
            lambda: _at(res().index, _resign(res(), kind="final")),
            "OutOfTurn",
            "expected",
        ),
        "signature": (lambda: _at(5, _flip_sig(_entries()[5])), "BadSignature", None),
        "signed by another": (
            lambda: _at(5, _resign(_entries()[5], signer=(_entries()[5].author + 1) % 4)),
            "BadSignature",
            None,
        ),
        "genesis signature": (
            lambda: _at(0, _flip_sig(_entries()[0])),
            "BadSignature",
            "party 3",
        ),
        "seat draw": (
            lambda: _at(5, _resign(_entries()[5], body={"n": bytes(32)})),
            "RejectedEntry",
            "seat draw",
        ),
        "score": (
            lambda: _at(res().index, _resign(res(), body={**res().body, "totals": [1, 2]})),
            "RejectedEntry",
            "hand score",
        ),
        "state": (
            lambda: _at(res().index, _resign(res(), body={**res().body, "state": bytes(32)})),
            "RejectedEntry",
            "state hash",
        ),
        "secret": (
            lambda: _at(
                _first("open").index,
                _resign(_first("open"), body={"secret": (5).to_bytes(32, "little")}),
            ),
            "RejectedEntry",
            "hand secret",
        ),
        "final": (
            lambda: _at(
                _first("final").index,
                _resign(_first("final"), body={"scores": [1, 2]}),
            ),
            "RejectedEntry",
            "final scores",
        ),
        "deck": (lambda: _swapped_deck(), "RejectedEntry", "deck:"),
        "move shares": (
            lambda: _at(move().index, _resign(move(), body={**move().body, "shares": None})),
            "RejectedEntry",
            "shares",
        ),
    }


def _swapped_deck() -> bytes:
    e = _first("shuffle")
    deck = bytearray(e.body["deck"])
    deck[64:128], deck[128:192] = deck[128:192], deck[64:128]
    return _at(e.index, _resign(e, body={**e.body, "deck": bytes(deck)}))


MUTANTS = _mutants()


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_verify_prints_a_name_and_reason_of_the_table(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, error, holds = MUTANTS[name]
    path = tmp_path / "changed.log"
    path.write_bytes(make())
    assert main(["verify", "--json", "--jobs", "1", str(path)]) == EXIT_BAD_ENTRY
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"] == error, doc["reason"]
    if holds is not None:
        assert holds in doc["reason"]
    rows = [(who, pats) for cls, who, pats in ROWS if cls == error]
    matching = [who for who, pats in rows if any(p.fullmatch(doc["reason"]) for p in pats)]
    assert matching, f"{error}: {doc['reason']!r} matches no row"
    names_nobody = all(w.strip() == "nobody" for w in matching)
    assert (doc["author"] is None) == names_nobody, (doc["author"], matching)


# Every reason text the session writes, found in its source: a call of one of these with a
# (possibly formatted) text as its first argument, and the name the refusal then carries.
RAISERS = {
    "reject": "RejectedEntry",  # session/checks.py
    "OpenError": "RejectedEntry",  # session/deal.py, through reject(str(exc))
    "RevealRefused": "RejectedEntry",  # session/deal.py, through reject(str(exc))
    "BodyError": "MalformedEntry",  # session/bodies.py, through Refusal(MalformedEntry, ...)
    "bad": "MalformedEntry",  # session/entry.py and terms.py: decoding and the genesis
    **{c: c for c in errors.__all__ if c not in ("LogError", "SessionError")},
}
# Never printed by `verify` nor refused at a peer: an empty log is not a log file (4.7), and
# `require_closed` is a replay option `verify` does not use (an unfinished log is exit 4).
# `unexpected kind` cannot happen (the kind is checked first); a text that is all fields
# (`{what}: {exc}`) has its prefix from the caller ("seat draw", "cut draw": rows of their own).
NOT_REFUSALS = {
    "an empty log has no genesis",
    "the log ends before the match result",
    "unexpected kind '7 [c]'",
    "7 [c]: 7 [c]",
}
# Reasons a peer gives that a log file cannot produce: the paragraph after the table.
PEER_ONLY = "A peer refuses with the same names what arrives over the network"


def _peer_only() -> list[tuple[str, re.Pattern[str]]]:
    start = SPEC.index(PEER_ONLY)
    text = SPEC[start : SPEC.index("\n\n", start)]
    out, current = [], ""
    for token in re.findall(r"`([^`]+)`", text):
        if token in RAISERS.values():
            current = token
        elif current:
            out.append((current, _pattern(" ".join(token.split()))))
    return out


def _source_reasons() -> list[tuple[str, str, str]]:
    """(file, name, a sample of the reason) for every reason text in buraco_p2p/session/:
    each formatted field is filled with text that a `<...>` (or `[<code>]`) stands for."""
    out = []
    for path in sorted((ROOT / "buraco_p2p" / "session").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else None
            args = list(node.args)
            if name == "Refusal" and isinstance(args[0], ast.Name):
                name, args = args[0].id, args[1:]
            if name not in RAISERS or not args:
                continue
            module = importlib.import_module(f"buraco_p2p.session.{path.stem}")
            text = _sample(args[0], vars(module))
            if text is not None and text not in NOT_REFUSALS:
                out.append((path.name, RAISERS[name], text))
    return out


def _sample(node: ast.expr, names: dict[str, Any]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(v.value)
            if isinstance(v, ast.Constant)
            else str(names[v.value.id])  # a constant of the module: the spec names its value
            if isinstance(v, ast.FormattedValue)
            and isinstance(v.value, ast.Name)
            and v.value.id.isupper()
            else "'7 [c]'"
            if isinstance(v, ast.FormattedValue) and v.conversion == ord("r")
            else "7 [c]"
            for v in node.values
        )
    return None  # str(exc): the text of an error whose own reasons are scanned


def test_every_reason_the_session_writes_matches_a_row_of_its_name() -> None:
    found = _source_reasons()
    assert len(found) >= 60, len(found)
    rows = [(cls, p) for cls, _, pats in ROWS for p in pats] + _peer_only()
    missing = [
        (file, cls, text)
        for file, cls, text in found
        if not any(c == cls and p.fullmatch(text) for c, p in rows)
    ]
    assert not missing, missing


# 4.8's exit codes, each with the words that name it in `verify --help` and in README.md.
EXIT_WORDS = {
    0: (r"\b0 for a fair match", r"exit 0 fair"),
    1: (r"\b1 naming the first bad entry", r"\b1 names the first bad"),
    2: (r"\b2 for a file that is not a match log", r"\b2 not a log"),
    3: (r"exit 3 if they do", r"\b3 and the first index where they differ"),
    4: (r"\b4 for a fair log of an unfinished match", r"\b4 unfinished"),
    5: (r"\b5 if the verifier itself failed", r"\b5 verifier failed"),
}


def _flat(text: str) -> str:
    return " ".join(text.replace("#", " ").split())


def test_the_exit_codes_of_4_8_are_those_of_the_help_and_the_readme(
    capsys: pytest.CaptureFixture[str],
) -> None:
    start = SPEC.index("### 4.8 Auditing a log")
    spec = _flat(SPEC[start : SPEC.index("#### Refusals and their names", start)])
    codes = {int(c) for c in re.findall(r"[Ee]xit code (\d)", spec)}
    assert codes == set(EXIT_WORDS)
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    helptext = _flat(capsys.readouterr().out)
    readme = _flat((ROOT / "README.md").read_text("utf-8"))
    for code, (in_help, in_readme) in EXIT_WORDS.items():
        assert re.search(in_help, helptext), code
        assert re.search(in_readme, readme), code
