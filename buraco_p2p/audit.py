"""`buraco-p2p verify LOGFILE`: audit a finished match offline.

This module is only the command's input and output. The audit itself is the session's own
verifier-only replay (the code path every peer runs on every entry it receives, with no secret
of its own), so a log this command accepts is one every honest peer would have accepted, and
there is no second implementation of the rules to drift from the first.

Exit codes: 0 the log is a fair, complete match (with `--partial`, also the first hands of
one: a log that stops between two hands); 1 the log is a log but an entry in it is bad (the
first one is named by its position, with its author, its fingerprint and the reason; a log
that stops early names the parties that owe the next entry); 2 the file is not a log at all
(missing, unreadable, empty, too big, not msgpack, another magic or version: see
`buraco_p2p.logfile`) or the command line is wrong. `--json` prints the verdict document the
text is made from. `--jobs N` checks the proofs on N processes (`buraco_p2p.verify_jobs`), with
the same verdict. `verify A B` compares two logs of one table (`buraco_p2p.verify_compare`):
exit 3 when they differ, else the verdict's code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from buraco_p2p.logfile import LogFileError, decode_log
from buraco_p2p.session import LogError, Phase, Replay, Terms, decode_entry, parse_genesis
from buraco_p2p.verify_compare import compare_logs
from buraco_p2p.verify_jobs import BadEntry, parse_jobs, replay_log

EXIT_FAIR: Final = 0
EXIT_BAD_ENTRY: Final = 1
EXIT_NOT_A_LOG: Final = 2

# A whole match of the longest preset is a few megabytes; refuse to even read more than this.
MAX_LOG_BYTES: Final = 64 * 1024 * 1024


class NotALog(Exception):
    """The file cannot be a match log (exit 2): the reason says why, in one line."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the audit found: the exit code and the document both outputs are made from."""

    code: int
    doc: dict[str, Any]


def read_bounded(path: str, limit: int = MAX_LOG_BYTES) -> bytes:
    """The file's bytes, refusing a missing, unreadable, empty or oversized file before
    reading more than `limit + 1` bytes of it."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise NotALog(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotALog(f"{path}: is a directory") from None
    except OSError as exc:
        raise NotALog(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not data:
        raise NotALog(f"{path}: empty file")
    if len(data) > limit:
        raise NotALog(f"{path}: larger than {limit} bytes: not a match log")
    return data


def register(subparsers: Any) -> None:
    """Add the `verify` subcommand (see `buraco_p2p.cli`)."""
    vp = subparsers.add_parser(
        "verify",
        help="audit a finished match log offline",
        description=(
            "Replay a match log without the network: every signature, hash link, key, shuffle "
            "and share proof, every move through the rules engine, every score, and every "
            "card of each finished hand once its keys are published. Exit 0 for a fair match, "
            "1 naming the first bad entry, 2 for a file that is not a match log. Given two "
            "logs of one table, also where they differ: exit 3 if they do."
        ),
    )
    vp.add_argument("logfile", metavar="LOGFILE", help="the match log to audit")
    vp.add_argument(
        "other",
        nargs="?",
        metavar="OTHER",
        help="another log of the same table: say whether and where the two differ (exit 3)",
    )
    vp.add_argument("--json", action="store_true", help="print one JSON document")
    vp.add_argument(
        "--partial",
        action="store_true",
        help="accept a log that stops between two hands (the first hands of a match)",
    )
    vp.add_argument(
        "--jobs",
        metavar="N",
        help="check the proofs on N processes (default: one per core); the verdict is the same",
    )
    vp.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    try:
        jobs = parse_jobs(args.jobs)
    except ValueError as exc:
        sys.stderr.write(f"buraco-p2p verify: {exc}\n")
        return EXIT_NOT_A_LOG
    if args.other is not None:
        code, text = compare_logs(
            (args.logfile, args.other),
            load=read_bounded,
            verify=lambda data, name: verify_bytes(
                data, partial=args.partial, name=name, jobs=jobs
            ),
            render=render_text,
            as_json=args.json,
        )
        with closed_pipe_is_quiet():
            sys.stdout.write(text)
            sys.stdout.flush()
        return code
    verdict = verify_path(args.logfile, partial=args.partial, jobs=jobs)
    with closed_pipe_is_quiet():
        if args.json:
            json.dump(verdict.doc, sys.stdout, indent=1, sort_keys=True)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(render_text(verdict.doc))
        sys.stdout.flush()
    # The verdict stands whether or not anyone read all of it (`verify LOG | head -1`).
    return verdict.code


@contextlib.contextmanager
def closed_pipe_is_quiet() -> Iterator[None]:
    """Output whose reader may go away (`| head`): stop writing quietly, as `cat` would.

    The block must flush what it writes; on a closed pipe stdout is pointed at /dev/null, or
    Python would fail again flushing it at exit and print a traceback.
    """
    try:
        yield
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def verify_path(path: str, *, partial: bool = False, jobs: int = 1) -> Verdict:
    """Audit the log file at `path` (see the module docstring for the exit codes)."""
    try:
        data = read_bounded(path)
    except NotALog as exc:
        return _not_a_log(str(exc))
    return verify_bytes(data, partial=partial, name=path, jobs=jobs)


def verify_bytes(
    data: bytes, *, partial: bool = False, name: str = "log", jobs: int = 1
) -> Verdict:
    """Audit a log file's bytes, the proofs checked by `jobs` processes
    (`buraco_p2p.verify_jobs`: the verdict does not depend on it)."""
    try:
        wires = decode_log(data)
    except LogFileError as exc:
        return _not_a_log(f"{name}: {exc}")
    try:
        result = replay_log(wires, jobs)
    except BadEntry as bad:
        return _bad_entry(bad.error, wires, bad.position)
    table = result.table
    if not result.closed:
        between_hands = (
            table.phase in (Phase.HAND_KEYS, Phase.TIME)
            and len(table.waiting_for) == table.n  # no key (or clock) after the hand yet
            and result.hands > 0
        )
        if not (partial and between_hands):
            owed = table.waiting_for
            reason = (
                f"the log ends before the match result ({table.phase.value}: "
                f"waiting for part{'ies' if len(owed) > 1 else 'y'} "
                f"{', '.join(map(str, owed))})"
            )
            err = LogError(reason, index=result.entries, author=owed[0] if owed else None)
            return _bad_entry(err, wires, result.entries)
    return Verdict(EXIT_FAIR, _summary(result, name))


def _not_a_log(reason: str) -> Verdict:
    return Verdict(EXIT_NOT_A_LOG, {"result": "not_a_log", "reason": reason})


def _terms(wires: list[bytes]) -> Terms | None:
    try:
        return parse_genesis(decode_entry(wires[0]))
    except LogError:
        return None


def _players(terms: Terms, seating: tuple[int, ...]) -> list[dict[str, Any]]:
    seat_of = {party: seat for seat, party in enumerate(seating)}
    return [
        {
            "party": p,
            "nickname": terms.nicknames[p],
            "fingerprint": fp,
            "seat": seat_of.get(p),
        }
        for p, fp in enumerate(terms.fingerprints())
    ]


def _bad_entry(err: LogError, wires: list[bytes], position: int) -> Verdict:
    """The verdict on the first refused entry: `position` is its place in the file (the
    entry's own index field may claim another), `author` the party whose signature it carries."""
    terms = _terms(wires)
    doc: dict[str, Any] = {
        "result": "bad_entry",
        "index": position,
        "claimed_index": err.index,
        "author": err.author,
        "error": type(err).__name__,
        "reason": err.reason,
        "entries_read": len(wires),
        # The signed entries that prove it to anyone holding the log (a refused entry
        # replays to the same refusal after the entries before it).
        "evidence": [w.hex() for w in err.evidence],
    }
    if terms is not None:
        doc["players"] = _players(terms, ())
        if err.author is not None and 0 <= err.author < terms.parties:
            doc["author_nickname"] = terms.nicknames[err.author]
            doc["author_fingerprint"] = terms.fingerprints()[err.author]
    if 0 <= position < len(wires):
        with contextlib.suppress(LogError):
            doc["kind"] = decode_entry(wires[position]).kind
    return Verdict(EXIT_BAD_ENTRY, doc)


def _summary(result: Replay, name: str) -> dict[str, Any]:
    table = result.table
    terms = table.terms
    voids = sum(1 for e in table.log if e.kind == "void")
    timed: dict[str, Any] = {}
    if terms.rules.minutes:
        # a match with a time limit: its rounds of clocks, and whether one found the time up
        timed = {
            "minutes": terms.rules.minutes,
            "clock_rounds": sum(1 for e in table.log if e.kind == "time") // table.n,
            "time_up": table.match is not None and table.match.time_is_up,
        }
    return {
        "result": "fair",
        "file": _display(name),
        "table_id": terms.table_id.hex(),
        "rules": terms.rules.name,
        "rules_digest": terms.rules.digest().hex(),
        "entries": result.entries,
        "hands": result.hands,
        "shuffles_verified": result.shuffles_verified,
        "hands_opened": len(result.opened),
        "complete": result.closed,
        "void_entries": voids,
        "scores": list(result.scores),
        "winner": result.winner,
        "players": _players(terms, table.seating),
        "successions": _successions(table),
        **timed,
    }


def _successions(table: Any) -> list[dict[str, Any]]:
    """Each seat a "replace" agreement passed to a new identity: the party, the index of
    the round's last entry (the new key signs that party's entries after it), the key it
    held before and the new one, as fingerprints."""
    terms = table.terms
    held = list(terms.keys)
    out = []
    for index, party, key in table.successions:
        seating = tuple(table.seating)
        out.append({
            "party": party,
            "seat": seating.index(party) if party in seating else None,
            "from_index": index + 1,
            "old_fingerprint": held[party].fingerprint(),
            "new_fingerprint": key.fingerprint(),
        })  # fmt: skip
        held[party] = key
    return out


def render_text(doc: dict[str, Any]) -> str:
    """The human summary of a verdict document."""
    result = doc["result"]
    if result == "not_a_log":
        return f"not a match log: {doc['reason']}\n"
    if result == "bad_entry":
        who = "unknown author"
        if doc.get("author") is not None:
            who = f"party {doc['author']}"
            if "author_nickname" in doc:
                who += f" ({doc['author_nickname']}, {doc['author_fingerprint']})"
        kind = f" ({doc['kind']})" if "kind" in doc else ""
        claimed = doc["claimed_index"]
        if claimed is not None and claimed != doc["index"]:
            kind += f" claiming index {claimed}"
        return (
            f"BAD LOG: entry {doc['index']}{kind} by {who}: "
            f"{doc['error']}: {doc['reason']}\n"
        )
    lines = [
        f"fair match: {doc['file']}" + ("" if doc["complete"] else " (unfinished: stops "
                                          "between two hands)"),
        f"  table {doc['table_id']}, rules {doc['rules']} (digest {doc['rules_digest'][:16]})",
        f"  {doc['hands']} hands, {doc['entries']} entries, "
        f"{doc['shuffles_verified']} shuffles verified, {doc['hands_opened']} hands opened",
    ]
    scores = ", ".join(f"team {t} {s}" for t, s in enumerate(doc["scores"]))
    winner = doc["winner"]
    lines.append(
        f"  {'final' if doc['complete'] else 'current'} score: {scores}"
        + (f" (winner: team {winner})" if winner is not None else "")
    )
    if "minutes" in doc:
        up = "the time is up" if doc["time_up"] else "the time is not up"
        lines.append(
            f"  time limit {doc['minutes']} min: {doc['clock_rounds']} rounds of clocks, {up}"
        )
    if doc["void_entries"]:
        lines.append(f"  {doc['void_entries']} void agreement entries")
    for p in doc["players"]:
        seat = "" if p["seat"] is None else f" seat {p['seat']}"
        lines.append(f"  party {p['party']}{seat} {p['nickname']!r} {p['fingerprint']}")
    for s in doc.get("successions", ()):
        lines.append(
            f"  succession: party {s['party']} seat {s['seat']} from entry {s['from_index']}: "
            f"{s['old_fingerprint']} -> {s['new_fingerprint']}"
        )
    return "\n".join(lines) + "\n"


def _display(path: str) -> str:
    return os.path.basename(path) or path
