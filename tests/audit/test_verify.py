"""`buraco-p2p verify` on whole match logs played by four in-memory session peers: a fair log
passes with its summary; a log with any entry changed, even re-signed by its own author, fails
naming the first bad entry, its author and the reason; a cut log fails naming who owes the
next entry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import TABLE_ID, identities, match_log

from buraco_p2p.audit import (
    EXIT_BAD_ENTRY,
    EXIT_FAIR,
    EXIT_NOT_A_LOG,
    EXIT_UNFINISHED,
    render_text,
    verify_bytes,
)
from buraco_p2p.cli import main
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.logfile import decode_log, encode_log
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Entry, Peer, Router, decode_entry, make_entry, make_genesis


def entries() -> list[Entry]:
    return [decode_entry(w) for w in decode_log(match_log())]


def resign(entry: Entry, **changes: Any) -> bytes:
    """The entry with some fields changed, signed again by its own author."""
    fields: dict[str, Any] = {
        "table": entry.table, "index": entry.index, "prev": entry.prev,
        "author": entry.author, "kind": entry.kind, "body": dict(entry.body),
    }  # fmt: skip
    fields.update(changes)
    return make_entry(identities()[fields["author"]], **fields).wire


def with_entry(index: int, wire: bytes) -> bytes:
    wires = decode_log(match_log())
    wires[index] = wire
    return encode_log(wires)


def first(kind: str, pred: Callable[[Entry], bool] = lambda e: True) -> Entry:
    return next(e for e in entries() if e.kind == kind and pred(e))


def test_a_fair_match_passes_with_its_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "match.log"
    path.write_bytes(match_log())
    assert main(["verify", str(path)]) == EXIT_FAIR
    text = capsys.readouterr().out
    assert text.startswith("fair match: match.log\n")
    assert "4 shuffles verified" in text
    for ident in identities():
        assert ident.public.fingerprint() in text
    assert main(["verify", "--json", str(path)]) == EXIT_FAIR
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == "fair" and doc["complete"] is True
    assert doc["ending"] == {"how": "completed"} and doc["voids"] == []
    assert "ended: completed" in text
    assert doc["entries"] == len(entries()) and doc["hands"] >= 1
    assert doc["shuffles_verified"] == 4 * doc["hands"] == 4 * doc["hands_opened"]
    assert doc["table_id"] == TABLE_ID.hex()
    assert sorted(p["seat"] for p in doc["players"]) == [0, 1, 2, 3]
    assert doc["winner"] in (0, 1) and len(doc["scores"]) == 2


def test_the_log_file_round_trips() -> None:
    wires = decode_log(match_log())
    assert encode_log(wires) == match_log()
    assert [decode_entry(w).index for w in wires] == list(range(len(wires)))


def test_a_wrong_score_signed_by_its_author_names_that_author() -> None:
    e = first("result")
    totals = [t + 10 for t in e.body["totals"]]
    v = verify_bytes(with_entry(e.index, resign(e, body={**e.body, "totals": totals})))
    assert v.code == EXIT_BAD_ENTRY
    assert (v.doc["index"], v.doc["author"], v.doc["kind"]) == (e.index, e.author, "result")
    assert v.doc["error"] == "RejectedEntry" and "hand score" in v.doc["reason"]
    assert v.doc["author_fingerprint"] == identities()[e.author].public.fingerprint()
    assert v.doc["evidence"] == [resign(e, body={**e.body, "totals": totals}).hex()]


def test_a_wrong_state_hash_is_caught() -> None:
    e = first("result")
    v = verify_bytes(with_entry(e.index, resign(e, body={**e.body, "state": bytes(32)})))
    assert (v.code, v.doc["index"], v.doc["author"]) == (EXIT_BAD_ENTRY, e.index, e.author)
    assert "state hash" in v.doc["reason"]


def test_a_shuffle_whose_deck_was_changed_fails_its_proof() -> None:
    e = first("shuffle")
    deck = bytearray(e.body["deck"])
    deck[64:128], deck[128:192] = deck[128:192], deck[64:128]  # swap two ciphertexts
    v = verify_bytes(with_entry(e.index, resign(e, body={**e.body, "deck": bytes(deck)})))
    assert (v.code, v.doc["index"], v.doc["author"]) == (EXIT_BAD_ENTRY, e.index, e.author)
    assert v.doc["error"] == "RejectedEntry" and v.doc["reason"].startswith("deck:")


def test_a_move_changed_to_another_legal_looking_move_is_caught() -> None:
    e = first("move", lambda e: e.body["m"][0] == 5)  # a discard
    m = list(e.body["m"])
    m[2] = (m[2] + 1) % 104  # a slot the mover's shares do not open
    v = verify_bytes(with_entry(e.index, resign(e, body={**e.body, "m": m})))
    assert (v.code, v.doc["index"], v.doc["author"]) == (EXIT_BAD_ENTRY, e.index, e.author)


def test_an_opened_secret_that_is_not_the_hand_key_is_caught() -> None:
    e = first("open")
    secret = (int.from_bytes(e.body["secret"], "little") + 1).to_bytes(32, "little")
    v = verify_bytes(with_entry(e.index, resign(e, body={"secret": secret})))
    assert (v.code, v.doc["index"], v.doc["author"]) == (EXIT_BAD_ENTRY, e.index, e.author)


def test_an_entry_signed_by_another_party_is_a_bad_signature() -> None:
    e = first("move")
    other = (e.author + 1) % 4
    forged = make_entry(
        identities()[other], table=e.table, index=e.index, prev=e.prev, author=e.author,
        kind=e.kind, body=dict(e.body),
    ).wire  # fmt: skip
    v = verify_bytes(with_entry(e.index, forged))
    assert (v.code, v.doc["index"], v.doc["author"]) == (EXIT_BAD_ENTRY, e.index, e.author)
    assert v.doc["error"] == "BadSignature"


def test_an_entry_of_another_table_is_refused() -> None:
    e = first("move")
    v = verify_bytes(with_entry(e.index, resign(e, table=b"another-table-id")))
    assert (v.code, v.doc["index"], v.doc["error"]) == (EXIT_BAD_ENTRY, e.index, "WrongTable")


def test_an_entry_replayed_at_another_index_breaks_the_chain() -> None:
    wires = decode_log(match_log())
    e = first("move")
    wires.insert(e.index + 1, wires[e.index])
    v = verify_bytes(encode_log(wires))
    assert (v.code, v.doc["index"]) == (EXIT_BAD_ENTRY, e.index + 1)
    assert v.doc["error"] == "BrokenChain"


def test_a_log_cut_short_is_unfinished_and_names_nobody_as_bad() -> None:
    """A log that merely stops is an unfinished match (exit 4): the summary says where it
    stops and whose entries would come next, and no entry is called bad."""
    wires = decode_log(match_log())
    e = first("move")
    v = verify_bytes(encode_log(wires[: e.index]))
    assert v.code == EXIT_UNFINISHED and v.doc["result"] == "unfinished"
    assert v.doc["ending"] == {"how": "unfinished", "phase": "turn", "waiting_for": [e.author]}
    assert v.doc["entries"] == e.index
    assert not render_text(v.doc).startswith("BAD")
    assert verify_bytes(encode_log(wires[: e.index]), partial=True).code == EXIT_UNFINISHED
    # The last entry missing, in the final round: the match is decided all the same (its
    # scores are the log's; no void can take that round's place), the signature named.
    v = verify_bytes(encode_log(wires[:-1]))
    last = decode_entry(wires[-1])
    assert v.code == EXIT_FAIR and v.doc["ending"]["how"] == "decided"
    assert v.doc["ending"]["silent"] == [last.author]


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (lambda d: b"\x92\xaeburaco-p2p/lug" + d[16:], "wrong magic"),
        (lambda d: d[:16] + b"\x02" + d[17:], "format 2"),
        (lambda d: d[:16], "no version"),
        (lambda d: d[:-1], "truncated inside record"),
        (lambda d: d[:18], "truncated inside the length"),
        (lambda d: d + b"\xc4\x00", "empty"),
        (lambda d: d + b"\x01", "not a msgpack bin"),
        (lambda d: d[:17] + b"\xc5\x00\x05" + b"x" * 5, "non-shortest"),
        (lambda d: d[:17], "no entry"),
        (lambda d: d[:17] + b"\xc4\x01\x00" * 200_001, "more than 200000 records"),
    ],
)
def test_a_file_that_is_not_a_log_file_exits_2(
    mangle: Callable[[bytes], bytes], reason: str
) -> None:
    v = verify_bytes(mangle(match_log()))
    assert v.code == EXIT_NOT_A_LOG, v.doc
    assert reason in v.doc["reason"]


def test_of_two_bad_entries_the_first_is_named() -> None:
    wires = decode_log(match_log())
    result = first("result")
    move = first("move")
    wires[result.index] = resign(result, body={**result.body, "state": bytes(32)})
    wires[move.index] = resign(move, body={**move.body, "m": [5, move.body["m"][1], 107]})
    v = verify_bytes(encode_log(wires))
    assert (v.code, v.doc["index"], v.doc["author"]) == (EXIT_BAD_ENTRY, move.index, move.author)


def test_a_match_ended_by_a_void_agreement_verifies() -> None:
    """A party that never commits: the three others sign a void agreement that ends the match;
    the log is complete and fair, and the summary counts the agreement."""
    genesis = make_genesis(TABLE_ID, identities(), get_preset("us"), timeout_ms=1000)
    peers = [
        Peer(genesis, ident, DeterministicRandomSource(bytes([9, n]) * 16))
        for n, ident in enumerate(identities())
    ]
    router = Router(peers, lambda party, view: pytest.fail("no move is expected"))
    router.silent = {2}
    router.start()
    router.run()
    router.advance(2.0)
    for p in (0, 1, 3):
        router.act(p, peers[p].propose_void("end", router.now))
    router.run()
    v = verify_bytes(encode_log(e.wire for e in peers[0].log))
    assert v.code == EXIT_FAIR, v.doc
    assert v.doc["complete"] is True and v.doc["void_entries"] == 3 and v.doc["hands"] == 0


def test_a_verifier_failure_is_a_verdict_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Whatever goes wrong inside the replay, `verify` answers with exit 5 and one line that
    accuses nobody (the entry it had reached is named, not its author)."""
    import buraco_p2p.audit as audit
    import buraco_p2p.verify_jobs as verify_jobs

    def broken(entries: Any, **_: Any) -> Any:
        for k, _ in enumerate(entries):
            if k == 5:
                raise ValueError("the match is over")
        raise AssertionError("unreachable")

    monkeypatch.setattr(verify_jobs, "replay", broken)
    path = tmp_path / "match.log"
    path.write_bytes(match_log())
    assert main(["verify", str(path)]) == audit.EXIT_VERIFIER_FAILED == 5
    out = capsys.readouterr()
    assert out.out.startswith("VERIFIER FAILED at entry 5: ValueError: the match is over")
    assert "Traceback" not in out.out + out.err and "by party" not in out.out
