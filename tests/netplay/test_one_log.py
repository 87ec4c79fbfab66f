"""One match, one log that nobody can rewrite (docs/protocol.md 4.5-4.6), against real
drivers: every seat is a client of its own (`play.node.open_node`: mesh, table directory,
saved log and votes file, a bot for its turns), all in this process over loopback, and one of
them hostile. Each test is one of the ways a hostile party broke the table before the final
point existed: the past rewritten, a retired key, an equivocation inside a round, a roll-back
that kept the future it cut, one stale message disarming the table, a decided match forked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from buraco_p2p.audit import EXIT_FAIR, verify_bytes
from buraco_p2p.logfile import encode_log
from buraco_p2p.session import Equivocation, Fault, Rewrite, Voided, decode_entry
from buraco_p2p.session.states import Phase

from .onelog import Seat, bot_table, logs, no_rollback, one_log, until


def _rewrites(seat: Seat) -> list[Rewrite]:
    return [e for e in seat.events if isinstance(e, Rewrite)]


def _named(seats: list[Seat]) -> set[int]:
    """Every party a void round in these seats' logs names."""
    return {p for s in seats for rec in s.d.peer.table.voids for p in rec.silent}


@pytest.mark.parametrize("n", [2, 4])
async def test_a_closed_match_is_not_rewritten_by_an_old_index(tmp_path: Path, n: int) -> None:
    """The match closes; then a party signs a second entry for its commitment of the seat
    draw, the first entry it ever signed, and sends it to everybody. Every honest client
    keeps its closed log and its saved file as they were, tells the attempt once (naming its
    author, with both signed entries), and `verify` still calls the saved log a completed
    match. (Before the settled point, every honest peer rolled back to that index and cut its
    saved log: the finished match was erased.)"""
    async with bot_table(tmp_path, n, timeout_ms=20000) as table:
        await until("the match closes", lambda: all(s.d.peer.table.closed for s in table.seats))
        hostile = table.seats[-1]
        honest = table.others(hostile)
        first = next(e for e in hostile.d.peer.log[1:] if e.author == hostile.party)
        other = hostile.variant(first)
        with no_rollback(honest):
            await table.send(hostile, other.wire, honest)
            await until("every honest client tells the rewrite",
                        lambda: all(_rewrites(s) for s in honest))  # fmt: skip
            await trio.sleep(0.5)
        for s in honest:
            (told,) = _rewrites(s)
            err = told.error
            assert isinstance(err, Equivocation)
            assert (err.author, err.index) == (hostile.party, first.index)
            assert s.d.peer.table.closed and s.d.peer.settled == len(s.d.peer.log)
            assert not any(isinstance(e, Fault) for e in s.events)
            v = verify_bytes(encode_log(s.saved_log()))
            assert v.code == EXIT_FAIR and v.doc["ending"]["how"] == "completed", v.doc
        assert one_log(logs(table, table.seats))


async def test_a_retired_key_cannot_cut_the_round_that_retired_it(tmp_path: Path) -> None:
    """A player walks out mid-hand; the host passes its seat to a bot (a "replace" round,
    the heir a `bot-peer` process the host starts), and the heir plays. Then the walker signs,
    with its retired key, a second entry for an index it authored before it left, and the
    honest clients hear it. Nothing is cut: the replace round is final (its signers, a
    majority, committed to everything before it); the heir keeps its seat. (Before, the
    round, the heir's seat and every hand since were cut.)"""
    async with bot_table(tmp_path, 4, rules=("hands=2",), timeout_ms=4000) as table:
        host = table.by_party(0)
        host.d.void_action = "replace"
        walker = table.seats[-1] if table.seats[-1] is not host else table.seats[-2]
        party = walker.party
        await until("the hand is under way",
                    lambda: any(e.kind == "move" for e in host.d.peer.log))  # fmt: skip
        await table.stop(walker)
        honest = [s for s in table.seats if s is not walker]
        old_key = walker.identity.public
        def heir_played(s: Seat) -> bool:
            t = s.d.peer.table
            return t.keys[party] != old_key and bool(t.successions) and any(
                e.author == party and e.index > t.successions[0][0] for e in s.d.peer.log)

        # at every honest client, so the old index is final everywhere when the rewrite comes
        await until("the heir has played, at every honest client",
                    lambda: all(heir_played(s) for s in honest), timeout=240)  # fmt: skip
        # the walker's last entry that the table kept: one it signed as it was stopped may
        # never have left it, and a second entry for that index is then no rewrite at all
        retired_at = host.d.peer.table.successions[0][0]
        first = next(e for e in reversed(host.d.peer.log[:retired_at]) if e.author == party)
        index = first.index
        other = walker.signed(index=index, prev=first.prev, kind=first.kind, author=party,
                              table=first.table, body={**first.body, "x": 1})  # fmt: skip
        with no_rollback(honest):
            for s in honest:  # relayed to each by whoever heard it
                s.d.deliver(host.identity.public, ["e", other.wire])
            def seen() -> str:
                return "; ".join(
                    f"party {s.party}: log {len(s.d.peer.log)}, settled {s.d.peer.settled}, "
                    f"told {[type(e).__name__ for e in s.events if isinstance(e, Rewrite | Fault)]}"
                    for s in honest
                )

            await until("every honest client tells it",
                        lambda: all(_rewrites(s) for s in honest), state=seen)  # fmt: skip
            await trio.sleep(0.5)
        for s in honest:
            err = _rewrites(s)[0].error
            assert (err.author, err.index) == (party, index)
            assert s.d.peer.table.keys[party] != old_key
            assert any(e.kind == "void" for e in s.d.peer.log)
        assert one_log(logs(table, honest))


async def _deal_split(table: object, n: int) -> tuple[Seat, list[Seat], int]:
    """Party 1's deal entry goes to the first honest seat, a second deal entry it signs for
    that index to the others (the parties after it in the round have made theirs): returns
    the hostile seat, the honest ones, the index."""
    from .onelog import Table

    assert isinstance(table, Table)
    hostile = table.by_party(1)
    honest = table.others(hostile)
    table.withhold(hostile, {"deal"})

    def made() -> int | None:
        for w in [*hostile.d._pending.values(), *(e.wire for e in hostile.d.peer.log)]:
            e = decode_entry(w)
            if e.kind == "deal" and e.author == hostile.party:
                return e.index
        return None

    await until("the hostile seat makes its deal entry", lambda: made() is not None)
    index = made()
    assert index is not None
    mine = next(decode_entry(w) for w in [*hostile.d._pending.values(),
                                          *(e.wire for e in hostile.d.peer.log)]
                if decode_entry(w).index == index)  # fmt: skip
    await table.send(hostile, mine.wire, honest[:1])
    await table.send(hostile, hostile.variant(mine).wire, honest[1:])
    return hostile, honest, index


@pytest.mark.parametrize("n", [3, 4, pytest.param(6, marks=pytest.mark.slow)])
async def test_an_equivocation_inside_a_round_names_only_its_author(
    tmp_path: Path, n: int
) -> None:
    """A party signs two different `deal` entries for its index, one for the first honest
    client and one for the rest. Every honest client names it and only it; the void that
    deals again without it is signed at that index by all, with nobody proposing, and the
    table moves on: the next hand is dealt. (Before, the honest parties after it in the
    round lost their entries, and the next one was named as having walked out, or a table
    of bots froze.)"""
    async with bot_table(tmp_path, n, timeout_ms=20000) as table:
        hostile, honest, index = await _deal_split(table, n)
        await until("every honest client deals again without the hostile one",
                    lambda: all(any(isinstance(e, Voided) for e in s.events) for s in honest),
                    state=lambda: str([(len(s.d.peer.log), s.d.peer.table.phase.value)
                                       for s in honest]))  # fmt: skip
        # (its partner signed, so its walk-out is proven and the hand is dealt again; at
        # three seats nobody shares its side yet, nothing is proven and the match ends)
        await until("the table moves on", lambda: all(
            s.d.peer.table.closed if n == 3 else
            s.d.peer.table.hand is not None and s.d.peer.table.hand.number >= 1
            for s in honest))  # fmt: skip
        for s in honest:
            first = next(e for e in s.d.peer.log if e.kind == "void")
            assert first.index == index
        assert _named(honest) == {hostile.party}
        assert one_log(logs(table, honest))
        for s in honest:
            errs = [e.error for e in s.events if isinstance(e, Fault)]
            assert errs and {e.author for e in errs} == {hostile.party}


async def test_a_roll_back_leaves_nothing_of_the_future_it_cut(tmp_path: Path) -> None:
    """After the equivocation of the test above, every honest client that had gone on past
    the index cut its log back to the void round there. One of them restarts from its files:
    its saved voids hold nothing past that round (it resumes: no "saved void does not
    check"), nobody honest is named, and its table goes on with the others."""
    async with bot_table(tmp_path, 4, timeout_ms=20000) as table:
        hostile, honest, index = await _deal_split(table, 4)
        await until("every honest client deals again",
                    lambda: all(any(isinstance(e, Voided) for e in s.events) for s in honest))
        back = honest[-1]
        await table.stop(back)
        (votes,) = back.root.glob("tables/*/votes")
        from buraco_p2p import codec

        saved = [decode_entry(w) for w in codec.unpack(votes.read_bytes())]
        assert all(e.index < index + 4 for e in saved)
        await table.restart(back)
        length = len(back.d.peer.log)
        await until("it goes on with the others", lambda: len(back.d.peer.log) > length + 4)
        assert _named(honest) == {hostile.party}
        assert one_log(logs(table, honest))


@pytest.mark.parametrize("n", [3, 4])
async def test_a_stale_void_does_not_disarm_the_table(tmp_path: Path, n: int) -> None:
    """Early on, a hostile party sends everybody a void naming party 0 (the proposer of a bot
    table) for the seat draw's first point, which every log then passes. Later a player
    really walks out: party 0 still proposes, and the table voids the walker out. (Before,
    party 0 deferred to the stale void for ever, and a table of bots never closed.)"""
    async with bot_table(tmp_path, n, timeout_ms=4000) as table:
        host = table.by_party(0)
        hostile = table.seats[-1]
        walker = table.seats[-2] if n > 3 else table.seats[1]
        assert walker is not hostile and walker is not host
        t = host.d.peer.table
        active = [p for p in range(n) if p != 0]
        stale = hostile.signed(index=1 + active.index(hostile.party), prev=t.prev_at(1),
                               kind="void", body={"action": "end", "silent": [0]})  # fmt: skip
        await until("the seat draw is done", lambda: all(
            s.d.peer.table.match is not None for s in table.seats))  # fmt: skip
        await table.send(hostile, stale.wire, table.others(hostile))
        await until("the hand is under way",
                    lambda: any(e.kind == "move" for e in host.d.peer.log))  # fmt: skip
        gone = walker.party
        await table.stop(walker)
        rest = [s for s in table.seats if s is not walker]
        await until("the walker is voided out", lambda: all(
            any(isinstance(e, Voided) and gone in e.silent for e in s.events) for s in rest),
            state=lambda: str([(s.d.peer.proposal, s.d.peer.agreement) for s in rest]))  # fmt: skip
        assert 0 not in _named(rest)


@pytest.mark.parametrize("n", [pytest.param(3, marks=pytest.mark.slow), 4,
                               pytest.param(6, marks=pytest.mark.slow)])  # fmt: skip
async def test_a_decided_match_closes_once(tmp_path: Path, n: int) -> None:
    """The match is decided; a hostile party withholds its `open` and `final` entries and
    signs lone void rounds of two tries naming everybody else, sending one try to some honest
    clients and the other to the rest. Neither is a round (a void needs a majority): every
    honest client names the hostile one only, and the honest logs are one log, closed once.
    (Before, each honest client took the lone round it got as a split it lost: two closed
    logs of one table, both fair to `verify`, the present honest players named silent.)"""
    async with bot_table(tmp_path, n, timeout_ms=4000) as table:
        hostile = table.seats[-1]
        honest = table.others(hostile)
        table.withhold(hostile, {"open", "final"})
        h = hostile.party
        await until("the honest clients wait for its open entry", lambda: all(
            s.d.peer.table.phase is Phase.OPEN and h in s.d.peer.table.waiting_for
            for s in honest), timeout=300)  # fmt: skip
        t = honest[0].d.peer.table
        point = t.index_of(h)
        assert point is not None
        others = sorted(p for p in range(n) if p != h)
        lone = [hostile.signed(index=point, prev=t.void_prev(), kind="void",
                               body={"action": "end", "silent": others, **try_})
                for try_ in ({}, {"try": 1})]  # fmt: skip
        await table.send(hostile, lone[0].wire, honest[: len(honest) // 2])
        await table.send(hostile, lone[1].wire, honest[len(honest) // 2 :])
        await until("every honest client closes", lambda: all(
            s.d.peer.table.closed for s in honest), timeout=120)  # fmt: skip
        await trio.sleep(0.5)
        assert one_log(logs(table, honest))
        assert len({len(s.d.peer.log) for s in honest}) == 1
        assert _named(honest) == {h}
