"""When a party that asks from the end of our log is sent our last step again (`Tails`,
docs/protocol.md 2.10): a table that waits does not send it with every `sync`, and one lost
on the way comes again, or a party on another branch never learns of the round that closed
the match (seed 501615 of the simulator: two seats, the one tail lost to a lossy link)."""

from __future__ import annotations

from buraco_p2p.session.resume import Tails

TIMEOUT = 2.0


def test_a_party_asking_from_our_end_gets_our_last_step_once_per_length() -> None:
    tails = Tails(TIMEOUT)
    assert tails.due("b", 10, 10, 0.0)
    assert not tails.due("b", 10, 10, 0.5)  # it is on its way
    assert not tails.due("b", 12, 10, 1.9)  # a claim past our end: the same step
    assert tails.due("b", 11, 11, 1.9)  # our log grew: its last step is new
    assert tails.due("c", 11, 11, 1.9)  # each party its own


def test_the_last_step_goes_again_once_a_timeout_has_passed() -> None:
    tails = Tails(TIMEOUT)
    assert tails.due("b", 10, 10, 0.0)
    assert not tails.due("b", 10, 10, TIMEOUT - 0.01)
    assert tails.due("b", 10, 10, TIMEOUT)  # the one sent may have been lost
    assert not tails.due("b", 10, 10, TIMEOUT + 0.5)
    assert tails.due("b", 10, 10, 2 * TIMEOUT + 0.1)


def test_a_party_behind_our_end_is_sent_the_log_not_the_tail() -> None:
    tails = Tails(TIMEOUT)
    assert not tails.due("b", 9, 10, 0.0)
    assert tails.due("b", 10, 10, 0.1)  # asking from behind noted nothing
