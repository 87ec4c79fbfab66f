"""`buraco-p2p verify LOGFILE`: audit a finished match offline.

This module is only the command's input and output. The audit itself is the session's own
verifier-only replay (the code path every peer runs on every entry it receives, with no secret
of its own), so a log this command accepts is one every honest peer would have accepted, and
there is no second implementation of the rules to drift from the first.

Exit codes: 0 the log is a fair match that has ended (completed with its final round,
decided with the final round missing, ended by agreement or abandoned: the summary says which,
and lists every void agreement with its silent parties and why it was made; with `--partial`,
also the first hands of one: a log that stops between two hands); 1 the log is a log but an
entry in it is bad (the first one is named by its position, with its author, its fingerprint
and the reason); 2 the file is not a log at all (missing, unreadable, empty, too big, not
msgpack, another magic or version: see `buraco_p2p.logfile`) or the command line is wrong; 4
the log is fair as far as it goes but the match is unfinished (it stops before the match
ended: a table still in play, `selfplay --hands 1`); the summary names the step it stops in and
the parties whose entries would come next, which is no charge against them; 5 the verifier
itself failed on an entry (a fault of this program, no proof against any party). `--json`
prints the verdict document the text is made from. `--jobs N` checks the proofs on N
processes (`buraco_p2p.verify_jobs`), with the same verdict. `verify A B` compares two logs of
one table (`buraco_p2p.verify_compare`): exit 3 when they differ, else the verdict's code.
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
from buraco_p2p.session import (
    LogError,
    Phase,
    Replay,
    Table,
    Terms,
    decode_entry,
    parse_genesis,
)
from buraco_p2p.session.flow import BEFORE_DEAL, BEFORE_SEATS, IN_HAND, SCORED, VoidRecord
from buraco_p2p.verify_compare import compare_logs
from buraco_p2p.verify_jobs import (
    BadEntry,
    Progress,
    VerifierFailed,
    parse_jobs,
    replay_log,
)

EXIT_FAIR: Final = 0
EXIT_BAD_ENTRY: Final = 1
EXIT_NOT_A_LOG: Final = 2
# 3 is `verify A B`: the two logs differ
EXIT_UNFINISHED: Final = 4
EXIT_VERIFIER_FAILED: Final = 5

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
            "card of each finished hand once its keys are published. Exit 0 for a fair match "
            "that has ended (the summary says how), 1 naming the first bad entry, 2 for a file "
            "that is not a match log, 4 for a fair log of an unfinished match, 5 if the "
            "verifier itself failed. Given two logs of one table, also where they differ: exit 3 "
            "if they do."
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
    data: bytes,
    *,
    partial: bool = False,
    name: str = "log",
    jobs: int = 1,
    progress: Progress | None = None,
) -> Verdict:
    """Audit a log file's bytes, the proofs checked by `jobs` processes
    (`buraco_p2p.verify_jobs`: the verdict does not depend on it); `progress(n)` as the
    first n entries are found good."""
    try:
        wires = decode_log(data)
    except LogFileError as exc:
        return _not_a_log(f"{name}: {exc}")
    try:
        result = replay_log(wires, jobs, progress=progress)
    except BadEntry as bad:
        return _bad_entry(bad.error, wires, bad.position)
    except VerifierFailed as failed:  # a verdict, never a traceback
        return _verifier_failed(failed.error, failed.position)
    return _verdict(result, name, partial=partial)


def _verdict(result: Replay, name: str, *, partial: bool) -> Verdict:
    """The verdict on a log every entry of which was accepted: a match that has ended (exit
    0, the summary says how), or an unfinished one (exit 4; 0 with `partial` between hands)."""
    table = result.table
    doc = _summary(result, name)
    if result.closed:
        return Verdict(EXIT_FAIR, doc)
    between_hands = (
        table.phase in (Phase.HAND_KEYS, Phase.TIME)
        and len(table.waiting_for) == table.n  # no key (or clock) after the hand yet
        and result.hands > 0
    )
    if partial and between_hands:
        return Verdict(EXIT_FAIR, doc)
    doc["result"] = "unfinished"
    return Verdict(EXIT_UNFINISHED, doc)


def _verifier_failed(exc: Exception, position: int | None) -> Verdict:
    return Verdict(EXIT_VERIFIER_FAILED, {
        "result": "verifier_failed",
        "index": position,
        "reason": f"{type(exc).__name__}: {exc}",
    })  # fmt: skip


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
        "ending": _ending(table),
        "voids": [_void(table, rec) for rec in table.voids],
        "abandoned": [
            {"hand": h, "sides": list(sides), "points": pts}
            for h, sides, pts in (table.match.abandoned if table.match is not None else ())
        ],
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


def _ending(table: Table) -> dict[str, Any]:
    """How the match ended, as the log shows it: "completed" (the final round), "decided"
    (the match was decided; a void closed it before every party signed the final scores),
    "ended_by_agreement" (a void with no fault to prove), "abandoned" (a void during a hand:
    `by` the silent parties, `proven` those a partner's signature proves walked out), or
    "unfinished" (the log stops: the step it stops in and whose entries would come next)."""
    if not table.closed:
        return {
            "how": "unfinished",
            "phase": "void" if table.voiding is not None else table.phase.value,
            "waiting_for": list(table.waiting_for),
        }
    last = table.voids[-1] if table.voids and table.voids[-1].then != "next_hand" else None
    if last is None:
        return {"how": "completed"}
    out: dict[str, Any] = {"silent": list(last.silent), "index": last.index}
    if last.then == "decided":
        return {"how": "decided", **out}
    if last.stage == IN_HAND:
        return {"how": "abandoned", "by": list(last.silent), "proven": list(last.proven), **out}
    return {"how": "ended_by_agreement", **out}


def _void(table: Table, rec: VoidRecord) -> dict[str, Any]:
    nick = table.terms.nicknames
    return {
        "index": rec.index,
        "action": rec.action,
        "silent": list(rec.silent),
        "silent_nicknames": [nick[p] for p in rec.silent],
        "phase": rec.phase,
        "hand": rec.hand,
        "stage": rec.stage,
        "proven": list(rec.proven),
        "charged": list(rec.charged),
        "points": rec.points,
        "then": rec.then,
        "try": rec.attempt,
        "held": list(rec.held),
        "reason": _void_reason(rec),
    }


def _void_reason(rec: VoidRecord) -> str:
    """Why the void was made and what it did, in words (the log cannot show the timeout
    itself: only that every party not named signed it)."""
    who = ", ".join(map(str, rec.silent))
    plural = len(rec.silent) > 1
    where = "before the seats were drawn" if rec.hand is None else (
        f"in the {rec.phase} step of hand {rec.hand}"
    )  # fmt: skip
    them = "them" if plural else "it"
    named = f"every party but {who} signed that the table was waiting for {them} {where}"
    if rec.attempt:
        held = ", ".join(map(str, rec.held))
        waited = ", ".join(str(p) for p in rec.silent if p not in rec.held)
        named = (
            f"every party but {who} signed, at try {rec.attempt}, that the table was waiting "
            f"for {waited} {where}"
            + (f" and that {held} did not sign the void's earlier tries" if held else "")
        )
    then = {
        "decided": "the match was decided, so it closes with its result",
        "closed": "the match ends there",
        "next_hand": "the next hand is dealt"
        + (" to the new identities" if rec.action == "replace" else ""),
    }[rec.then]
    if rec.stage == BEFORE_SEATS:
        return f"{named}: {then}"
    if rec.stage == BEFORE_DEAL:
        return f"{named}: nobody had seen a card; {then}"
    if rec.stage == SCORED:
        return f"{named}: the hand was counted, so it is scored; {then}"
    unproven = [p for p in rec.silent if p not in rec.proven]
    parts = [f"{named}: the hand is abandoned"]
    if rec.proven:
        proven = ", ".join(map(str, rec.proven))
        sides = ", ".join(map(str, rec.charged))
        parts.append(
            f"a partner signed, which proves part{'ies' if len(rec.proven) > 1 else 'y'} "
            f"{proven} walked out: match side{'s' if len(rec.charged) > 1 else ''} {sides} "
            f"charged {rec.points}{' each' if len(rec.charged) > 1 else ''}"
        )
    if unproven:
        parts.append(
            f"only opponents named part{'ies' if len(unproven) > 1 else 'y'} "
            f"{', '.join(map(str, unproven))}: no fault is proven and nobody is charged for it"
        )
    return "; ".join(parts) + f"; {then}"


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
    if result == "verifier_failed":
        at = "" if doc["index"] is None else f" at entry {doc['index']}"
        return (
            f"VERIFIER FAILED{at}: {doc['reason']} "
            "(a fault of the verifier, not evidence against any party)\n"
        )
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
    unfinished = result == "unfinished"
    partial = not unfinished and not doc["complete"]
    lines = [
        ("unfinished match (the log is fair as far as it goes)" if unfinished else "fair match")
        + f": {doc['file']}"
        + (" (unfinished: stops between two hands)" if partial else ""),
        f"  table {doc['table_id']}, rules {doc['rules']} (digest {doc['rules_digest'][:16]})",
        f"  {doc['hands']} hands, {doc['entries']} entries, "
        f"{doc['shuffles_verified']} shuffles verified, {doc['hands_opened']} hands opened",
    ]
    if "ending" in doc:
        lines.append(f"  {_ending_text(doc)}")
    scores = ", ".join(f"team {t} {s}" for t, s in enumerate(doc["scores"]))
    winner = doc["winner"]
    how = doc.get("ending", {}).get("how", "completed")
    label = (
        "final score" if how in ("completed", "decided")
        else "score when the match ended (no winner)" if doc["complete"]
        else "current score"
    )  # fmt: skip
    lines.append(
        f"  {label}: {scores}" + (f" (winner: team {winner})" if winner is not None else "")
    )
    for a in doc.get("abandoned", ()):
        sides = ", ".join(f"team {i}" for i in a["sides"])
        lines.append(f"  hand {a['hand']} abandoned: {sides} charged {a['points']}")
    if "minutes" in doc:
        up = "the time is up" if doc["time_up"] else "the time is not up"
        lines.append(
            f"  time limit {doc['minutes']} min: {doc['clock_rounds']} rounds of clocks, {up}"
        )
    if doc["void_entries"]:
        lines.append(f"  {doc['void_entries']} void agreement entries")
    for v in doc.get("voids", ()):
        names = ", ".join(
            f"party {p} {n!r}" for p, n in zip(v["silent"], v["silent_nicknames"], strict=True)
        )
        lines.append(
            f"  void at entry {v['index']} ({v['action']}"
            + (f", try {v['try']}" if v["try"] else "")
            + f"), silent: {names}: {v['reason']}"
        )
    for p in doc["players"]:
        seat = "" if p["seat"] is None else f" seat {p['seat']}"
        lines.append(f"  party {p['party']}{seat} {p['nickname']!r} {p['fingerprint']}")
    for s in doc.get("successions", ()):
        lines.append(
            f"  succession: party {s['party']} seat {s['seat']} from entry {s['from_index']}: "
            f"{s['old_fingerprint']} -> {s['new_fingerprint']}"
        )
    return "\n".join(lines) + "\n"


def _ending_text(doc: dict[str, Any]) -> str:
    end = doc["ending"]
    how = end["how"]
    nick = {p["party"]: p["nickname"] for p in doc["players"]}

    def parties(ps: list[int]) -> str:
        return ", ".join(f"party {p} {nick.get(p, '?')!r}" for p in ps)

    if how == "completed":
        return "ended: completed, every party signed the final scores"
    if how == "decided":
        return (
            "ended: decided (a void closed the match after it was decided; "
            f"missing signatures: {parties(end['silent'])})"
        )
    if how == "ended_by_agreement":
        return f"ended: by agreement of the others, without {parties(end['silent'])}"
    if how == "abandoned":
        unproven = [p for p in end["by"] if p not in end["proven"]]
        text = "ended: abandoned during a hand"
        if end["proven"]:
            text += f"; walked out, proven by a partner's signature: {parties(end['proven'])}"
        if unproven:
            text += f"; named by opponents only, nothing proven: {parties(unproven)}"
        return text
    phase = end["phase"]
    waiting = parties(end["waiting_for"])
    return (
        f"not ended: the log stops in {phase}, where {waiting} would append next "
        "(a log that stops is no charge against anyone)"
    )


def _display(path: str) -> str:
    return os.path.basename(path) or path
