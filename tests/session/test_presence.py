"""A party catching up is answering, not missing: an heir seated by a "replace" that is
still fetching and checking the log when the table's timeout passes is not reported (so no
second replacement is proposed for it) while its link is up and its claims of the log it
holds advance; once they stop for a timeout, or its link is down, it is missing again, and
claims can hold a step only so long. The clock is the `now` the test passes."""

from __future__ import annotations

from session_helpers import identities, stalled

from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.session import Peer, Router, TimedOut
from buraco_p2p.session.presence import CATCHUP_TIMEOUTS, STANDING_TIMEOUTS, Presence

GONE = 2
LIMIT = 1.0  # the table's timeout, in seconds of the test's clock


def _heir_seated_behind(seed: int) -> tuple[Router, Identity, float, float]:
    """Party GONE fell silent and the others replaced it by an heir; the heir has not caught
    up (it heard none of it), so the new hand waits for its first entry. Returns the router,
    the heir's identity and the earliest and latest times at which the step that waits for
    it began at a present party."""
    r, heir = stalled(seed, b"presence-table-1", GONE, LIMIT)
    r.act(0, r.peers[0].propose_void("replace", r.now, (GONE,), (heir.public.raw,)))
    r.run()
    for p in (1, 3):
        r.act(p, r.peers[p].join_void(r.now))
    begun = r.now
    r.run()
    for p in (0, 1, 3):
        t = r.peers[p].table
        assert t.keys[GONE] == heir.public and GONE in t.waiting_for, p
    return r, heir, begun, r.now


def _reported(peer: Peer, now: float, linked: set[int]) -> tuple[int, ...] | None:
    events = [e for e in peer.tick(now, linked).events if isinstance(e, TimedOut)]
    return events[0].parties if events else None


def test_an_heir_catching_up_past_the_timeout_is_not_reported_until_it_stops() -> None:
    r, heir, _begun, since = _heir_seated_behind(41)
    host = r.peers[0]
    length = len(host.log)
    old = identities()[GONE].public
    assert not host.heard(old, 5, since + 0.1)  # the replaced identity holds no seat
    assert host.heard(heir.public, 10, since + 0.5)
    assert _reported(host, since + 1.2, {GONE}) is None  # past the timeout, but answering
    assert not host.heard(heir.public, 10, since + 1.3)  # the same claim is no progress
    assert host.heard(heir.public, 30, since + 1.4)
    assert _reported(host, since + 2.3, {GONE}) is None
    # Claims of all we hold, or more, are not catching up: they buy nothing.
    assert not host.heard(heir.public, length, since + 2.35)
    assert not host.heard(heir.public, length + 5, since + 2.35)
    # It stopped advancing a timeout ago: missing, reported once.
    assert _reported(host, since + 2.4, {GONE}) == (GONE,)
    assert _reported(host, since + 9.0, {GONE}) is None


def test_claims_count_only_over_a_link_that_is_up() -> None:
    r, heir, _begun, since = _heir_seated_behind(42)
    peer = r.peers[1]
    assert peer.heard(heir.public, 10, since + 0.5)
    assert _reported(peer, since + 1.2, set()) == (GONE,)


def test_a_party_that_never_advances_is_reported_at_the_timeout() -> None:
    r, _heir, begun, since = _heir_seated_behind(43)
    peer = r.peers[3]
    assert _reported(peer, begun + LIMIT - 0.001, {GONE}) is None
    assert _reported(peer, since + LIMIT, {GONE}) == (GONE,)


def test_claims_hold_a_step_only_so_long() -> None:
    """An identity that claims one more entry each time can hold a step for at most
    CATCHUP_TIMEOUTS timeouts, then it is reported though it still claims progress."""
    r, heir, _begun, since = _heir_seated_behind(44)
    host = r.peers[0]
    now = since
    reported = None
    for position in range(1, 4 * CATCHUP_TIMEOUTS):
        now += LIMIT / 2
        assert host.heard(heir.public, position, now)
        reported = _reported(host, now, {GONE})
        if reported is not None:
            break
    assert reported == (GONE,)
    assert CATCHUP_TIMEOUTS * LIMIT - LIMIT / 2 < now - since <= CATCHUP_TIMEOUTS * LIMIT


def test_a_standing_retry_counts_for_its_wait_once_per_point() -> None:
    """A retry that stands behind our log (4.5 R3) keeps its party answering for
    STANDING_TIMEOUTS timeouts from the first time it is noted, over a link that is up; the
    same point noted again, or a lower one, buys nothing more; a later one does."""
    presence, key = Presence(), b"k" * 32
    presence.stands(key, 40, 10.0)
    end = 10.0 + STANDING_TIMEOUTS * LIMIT
    assert presence.answering(key, True, end - 0.01, LIMIT)
    assert not presence.answering(key, False, end - 0.01, LIMIT)  # its link is down
    assert not presence.answering(key, True, end, LIMIT)
    presence.stands(key, 40, end)  # noted again: no new wait
    presence.stands(key, 39, end)  # a lower point: none either
    assert not presence.answering(key, True, end + 0.01, LIMIT)
    presence.stands(key, 41, end)
    assert presence.answering(key, True, end + 0.01, LIMIT)
    assert presence.absent([0], [key], {0}, end + 0.01, end - 1.0, LIMIT) == ()
    # and never past the cap on how long a step waits for parties it cannot check
    begun = end - CATCHUP_TIMEOUTS * LIMIT
    assert presence.absent([0], [key], {0}, end + 0.01, begun, LIMIT) == (0,)


def test_a_party_that_noted_a_standing_retry_first_is_not_named_by_the_others_retry() -> None:
    """A standing retry reaches the peers at different moments. Party 1 notes the heir's
    before its own timeout of the step, so it does not count the heir late; parties 0 and 3
    note it after theirs, propose and join a void naming the heir, and wait for party 1's
    vote. Party 1 signs once the heir's wait is over; their retry must not name it before
    then (4.5 R2: their wait for its vote starts when the standing ends at their clocks).
    Before, they retried twice the timeout after signing and closed naming party 1, present
    and answering, with the heir."""
    r, heir, _begun, since = _heir_seated_behind(46)
    first = r.peers[1]
    first._presence.stands(heir.public.raw, len(first.log) - 1, since)
    first.tick(since + 1.2, set())
    assert first.late == frozenset()
    for p in (0, 3):  # their tick notes it only after their timeout counted the heir late
        assert _reported(r.peers[p], since + 1.2, {GONE}) == (GONE,)
        r.peers[p]._presence.stands(heir.public.raw, len(r.peers[p].log) - 1, since + 1.25)
    r.act(0, r.peers[0].propose_void("end", since + 1.2, (GONE,)))
    r.run()
    r.act(3, r.peers[3].join_void(since + 1.3))
    r.run()
    now = since + 1.3
    while not all(r.peers[p].table.closed for p in (0, 1, 3)):
        now += LIMIT / 10
        assert now < since + 10 * LIMIT, "the table never closed"
        for p in (0, 1, 3):
            r.act(p, r.peers[p].tick(now, {0, 1, 3} - {p}))
            r.act(p, r.peers[p].join_void(now))  # bots join what they may, at once
        r.run()
    for p in (0, 1, 3):
        last = r.peers[p].log[-1]
        assert last.kind == "void" and last.body["silent"] == [GONE], (p, last.body)
    assert now - since >= STANDING_TIMEOUTS * LIMIT  # party 1 signed once the wait ended


def test_a_claim_keeps_a_peer_from_proposing_never_from_agreeing() -> None:
    """Claims reach the peers they are sent to and no other (4.5): the host, which hears the
    heir catch up, does not report it nor propose to name it, but a party that did not hear
    them proposes, and the host agrees: its clock saw the heir keep the step waiting past
    the timeout (`Peer.late`). Were it to hold back, the proposer's retry would name it."""
    r, heir, _begun, since = _heir_seated_behind(45)
    host, other = r.peers[0], r.peers[1]
    assert host.heard(heir.public, 10, since + 0.5)
    assert _reported(host, since + 1.2, {GONE}) is None
    assert host.overdue == frozenset() and host.late == {GONE}
    assert _reported(other, since + 1.2, {GONE}) == (GONE,)
    r.act(1, other.propose_void("end", since + 1.2, (GONE,)))
    r.run()
    assert other.agreement is not None and host.proposal is not None
    r.act(0, host.join_void(since + 1.3))
    assert host.agreement is not None and host.agreement.silent == (GONE,)


def test_a_standing_retry_is_counted_alike_whatever_the_link() -> None:
    """A standing retry is a signed vote every peer holds: it keeps its party from being late
    here (a peer does not agree to name it) for the same STANDING_TIMEOUTS timeouts, link up
    or down; a claim never does."""
    presence, key = Presence(), b"k" * 32
    presence.stands(key, 40, 10.0)
    end = 10.0 + STANDING_TIMEOUTS * LIMIT
    assert presence.standing(key, end - 0.01, LIMIT) and not presence.standing(key, end, LIMIT)
    presence.heard(key, 3, 50, 10.0)
    assert not presence.standing(key, end, LIMIT) and presence.answering(key, True, 10.5, LIMIT)


def test_a_party_whose_retry_stands_is_not_late_until_its_wait_is_over() -> None:
    """While a retry of the party the step waits for stands behind our log (noted here as
    the peer's tick notes it, `Ledger.standing_retry`), the peer does not count it late, so
    it agrees to no void naming it; once the wait is over it does."""
    r, heir, _begun, since = _heir_seated_behind(46)
    host, other = r.peers[0], r.peers[1]
    host._presence.stands(heir.public.raw, len(host.log) - 1, since)
    host.tick(since + 1.2, set())
    assert host.late == frozenset()
    assert _reported(other, since + 1.2, {GONE}) == (GONE,)
    r.act(1, other.propose_void("end", since + 1.2, (GONE,)))
    r.run()
    r.act(0, host.join_void(since + 1.3))
    assert host.agreement is None
    host.tick(since + STANDING_TIMEOUTS * LIMIT, set())
    assert host.late == {GONE}
    r.act(0, host.join_void(since + STANDING_TIMEOUTS * LIMIT))
    assert host.agreement is not None
