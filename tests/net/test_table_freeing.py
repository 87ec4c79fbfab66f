"""The host's table frees a seat in two steps, so a kick is all or nothing: `freeing` builds
the roster without changing the table; only `commit`, once that roster is saved, makes it
the table's, and a roster that no longer follows the table's is refused."""

from __future__ import annotations

import pytest

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.table.table import KICKED, LEFT, Departure, HostTable, Member


def _table(seats: int) -> tuple[HostTable, list[Identity]]:
    ids = [Identity.generate(f"p{i}") for i in range(seats)]
    table = HostTable(bytes(16), Member(0, ids[0].public, "p0", ()), seats=seats)
    for ident in ids[1:]:
        table.seat_new(ident.public, ident.nickname, ())
    return table, ids


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_freeing_changes_nothing_until_it_is_committed(seats: int) -> None:
    table, ids = _table(seats)
    before = table.roster
    last = ids[-1].public
    roster = table.freeing(last, KICKED)
    assert roster is not None
    assert table.roster == before and table.roster.member(last) is not None
    assert roster.version == before.version + 1 and roster.member(last) is None
    assert roster.departures[-1] == Departure(seats - 1, last, KICKED)
    table.commit(roster)
    assert table.roster == roster


def test_a_roster_that_no_longer_follows_the_table_is_not_committed() -> None:
    table, ids = _table(3)
    stale = table.freeing(ids[1].public, KICKED)
    assert stale is not None
    table.free(ids[2].public, LEFT)  # the table moved on meanwhile
    with pytest.raises(ValueError, match="does not follow"):
        table.commit(stale)
    assert table.roster.member(ids[1].public) is not None


def test_the_host_and_strangers_cannot_be_freed() -> None:
    table, ids = _table(2)
    assert table.freeing(ids[0].public) is None
    assert table.freeing(Identity.generate("x").public) is None
    assert table.freeing(ids[1].public, "banished") is None
