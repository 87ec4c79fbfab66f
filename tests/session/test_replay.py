"""The verifier's replay: the same `Table` a peer runs, fed a whole log with no secrets.

Each bad log is refused at its first bad entry, naming that entry's index and author."""

from __future__ import annotations

import pytest
from session_helpers import identities, resign, table_copy

from buraco_p2p.rules import get_preset
from buraco_p2p.session import (
    BrokenChain,
    Entry,
    LogError,
    MalformedEntry,
    OutOfTurn,
    RejectedEntry,
    Router,
    Table,
    decode_entry,
    make_genesis,
    replay,
)
from buraco_p2p.session.bodies import KINDS


@pytest.fixture(scope="module")
def match_log(played_match: Router) -> list[Entry]:
    """A complete short match of at least two hands."""
    return list(played_match.peers[0].log)


@pytest.fixture(scope="module")
def before_first(match_log: list[Entry]) -> dict[str, tuple[Table, Entry]]:
    """For every kind, the verifier's table just before that kind's first entry."""
    t = Table(match_log[0])
    out: dict[str, tuple[Table, Entry]] = {}
    for e in match_log[1:]:
        if e.kind not in out:
            out[e.kind] = (table_copy(t), e)
        t.apply(e)
    return out


def test_the_log_replays(match_log: list[Entry]) -> None:
    rep = replay(e.wire for e in match_log)
    assert rep.closed and rep.entries == len(match_log) and rep.hands >= 2
    assert rep.fingerprints == tuple(i.public.fingerprint() for i in identities())
    with pytest.raises(LogError):
        replay([e.wire for e in match_log[:-1]], require_closed=True)


# "time" appears only in a match with a time limit: test_time_limit.py checks its bodies.
@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ("genesis", "void", "time")])
def test_a_malformed_body_of_every_kind_names_its_author(
    before_first: dict[str, tuple[Table, Entry]], kind: str
) -> None:
    table, entry = before_first[kind]
    for body in ({**entry.body, "extra": 1}, {}, {k: "x" for k in entry.body}):
        bad = resign(entry, entry.author, body=body)
        with pytest.raises(MalformedEntry) as info:
            table_copy(table).apply(bad)
        assert info.value.author == entry.author and info.value.index == entry.index
        assert info.value.evidence == (bad.wire,)
    table_copy(table).apply(entry)  # the genuine entry passes


def test_an_entry_replayed_at_another_index_breaks_the_chain(match_log: list[Entry]) -> None:
    t = Table(match_log[0])
    for e in match_log[1:10]:
        t.apply(e)
    with pytest.raises(BrokenChain) as info:
        t.apply(match_log[5])
    assert info.value.author == match_log[5].author


def test_an_entry_re_signed_for_another_hand_is_refused(match_log: list[Entry]) -> None:
    """A party's key announcement of hand 0, re-signed by that party in hand 1's place:
    its proof is bound to the hand and the log position, so it fails."""
    keys = [i for i, e in enumerate(match_log) if e.kind == "keys"]
    first, second = keys[0], keys[4]
    assert match_log[first].author == match_log[second].author
    t = Table(match_log[0])
    for e in match_log[1:second]:
        t.apply(e)
    old = match_log[first]
    forged = resign(old, old.author, index=second, prev=match_log[second].prev)
    with pytest.raises(RejectedEntry) as info:
        t.apply(forged)
    assert info.value.author == old.author and "deck" in info.value.reason


def test_an_entry_by_the_wrong_author_is_out_of_turn(match_log: list[Entry]) -> None:
    moves = [i for i, e in enumerate(match_log) if e.kind == "move"]
    i = moves[0]
    t = Table(match_log[0])
    for e in match_log[1:i]:
        t.apply(e)
    real = match_log[i]
    other = (real.author + 1) % 4
    with pytest.raises(OutOfTurn) as info:
        t.apply(resign(real, other, author=other))
    assert info.value.author == other


def test_a_flipped_byte_fails_at_its_entry(match_log: list[Entry]) -> None:
    """A byte flipped in an entry (any field, the signature included) is refused right
    there, naming that index (the full sweep over a log is the audit command's test)."""
    positions = {int(len(match_log) * f) for f in (0.1, 0.3, 0.5, 0.7, 0.9)}
    t = Table(match_log[0])
    for k, e in enumerate(match_log[1:], start=1):
        if k in positions:
            data = e.wire
            for at in range(0, len(data), max(1, len(data) // 23)):
                bad = data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :]
                with pytest.raises(LogError) as info:
                    t.apply(decode_entry(bad))
                # a flipped index names the index the entry now claims
                assert info.value.index in (None, k) or isinstance(info.value, BrokenChain)
                t.fault = None  # refused before any effect: only the fault mark was set
        t.apply(e)


def test_a_genesis_alone_and_an_empty_log() -> None:
    with pytest.raises(MalformedEntry):
        replay([])
    g = make_genesis(b"replay-test-tabl", identities(), get_preset("us"))
    rep = replay([g.wire])
    assert rep.entries == 1 and not rep.closed and rep.hands == 0
    assert decode_entry(g.wire).hash == g.hash
