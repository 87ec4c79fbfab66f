"""The adversarial simulator over the real session code (`sim`, docs/protocol.md 4.6
"Properties"): a fixed set of schedules in the default run, the bugs it found kept as
regression seeds (those whose schedule still meets its fault shown to fail again with the
fault put back), one schedule replayed alike, and the soak (`slow`: at least 100,000
schedules, on every core).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import types
from typing import Any

import pytest

from buraco_p2p.session import Output, Peer, bodies
from buraco_p2p.session import agreement as agreement_module
from buraco_p2p.session import ledger as ledger_module
from buraco_p2p.session import voter as voter_module
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.presence import Presence
from buraco_p2p.session.table import Table
from sim import Failure, checks, explore, run, run_params
from sim import hostile as hostile_module
from sim import schedule as schedule_module
from sim import seat as seat_module
from sim.world import Params

# The default run's schedules: seeds FIRST, FIRST + 1, ... (about half a minute).
FIRST = 7_000
COUNT = int(os.environ.get("BURACO_P2P_SIM_COUNT", "24"))
SOAK = int(os.environ.get("BURACO_P2P_SIM_SOAK", "100000"))

# A schedule that found three faults of the session layer on the way: six seats, party 0
# crashes early in the first hand, is cut off meanwhile, and restarts after the others voided
# it out at its index; a hostile party splits its moves. The restarted peer made its own entry
# where the void round stood (a round it held whole only once its log had passed the point,
# and never took); it asked for the log from its length, which left out the round's first
# entry; and a peer's own entry made ahead for a keys round that a void then replaced was
# applied out of turn, stopping the table at a "fault" of its own.
FOUND = Params(
    seed=128, seats=6, deal=1, stage=2, hostile={3: "split"},
    void_actions=["end", "void", "end", "end", "end", "end"], drop=0.01, dup=0.1,
    delay=(0.001, 0.05),
    rates=[0.9827, 0.9616, 0.9509, 1.0825, 1.0677, 0.9283],
    crashes=[(0, 0.283, 1.95)], partitions=[(frozenset({0}), 0.534, 1.589)],
    heal=1.835, horizon=25.835,
)  # fmt: skip


def test_the_simulator_finds_nothing_in_its_schedules() -> None:
    """S1-S4 after every event, L1, L2, `verify` and `verify A B` at the end, for every
    schedule of the default run (seats, strategies, faults drawn from each seed)."""
    out = explore(FIRST, count=COUNT)
    assert len(out) == COUNT
    assert {o.seats for o in out} >= {2, 3, 4, 6}
    assert sum(o.evidence for o in out) and sum(o.voids for o in out)


# schedules of the `release` strategy, which a schedule never draws at random: (seed, seats),
# each one where the strategy signs votes and sends them once its log counts their point final
RELEASE = [(20, 3), (6, 4), (38, 4), (3, 6), (13, 6)]


@pytest.mark.parametrize(("seed", "seats"), RELEASE)
def test_a_vote_sent_once_the_others_went_on_holds(
    seed: int, seats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile party joins every void proposed at its point, keeps its entries past the
    point from some of the others and sends them its vote once its own log counts the point
    final: the properties hold, and the votes were sent."""
    sent: list[int] = []
    act = hostile_module.Release.act

    def counted(self: hostile_module.Release, seat: seat_module.Seat, now: float) -> list[Any]:
        out = act(self, seat, now)
        sent.append(len(out))
        return out

    monkeypatch.setattr(hostile_module.Release, "act", counted)
    outcome = run(seed, seats=seats, hostile="release")
    assert set(outcome.hostile.values()) == {"release"}
    assert sum(sent) > 0


# schedules of the `aside` strategy (drawn by name only): a party the table waits for tells
# some of the others only that it is catching up. (seed, seats):
# - 100 at four seats: parties 0 and 1 sign a void naming party 3; party 2, whose clock
#   counted party 3 as catching up, did not sign, and their retry named party 2 (S2);
# - 107 at six seats: the same, naming party 0;
# - 2035 at six seats: party 0 crashes; the others sign a void naming party 1, then its retry
#   naming 0 and 1; back, party 0 signs the first (its late signature completes it there)
#   while the retry completes at the others: two closed logs (S1);
# - 5 at six seats, two parties aside: the present parties held back for seven seconds.
ASIDE = [(100, 4), (107, 6), (2035, 6), (5, 6)]


def _join_unless_catching_up(self: Peer, now: float) -> Output:
    """`Peer.join_void` as it was: a party heard catching up could not be named."""
    if self._held_by_dispute() or not self._voter.join(self.party, self.overdue):
        return Output()
    return self.run(now)


@pytest.mark.parametrize(("seed", "seats"), ASIDE)
def test_a_party_catching_up_to_some_only_splits_nobody(seed: int, seats: int) -> None:
    outcome = run(seed, seats=seats, hostile="aside")
    assert set(outcome.hostile.values()) == {"aside"}


def test_the_regression_finds_a_peer_that_will_not_join_for_a_claim(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: a peer joins a proposal only for parties it has not heard catch
    up (`Peer.overdue`, not `Peer.late`): the parties a claim reached hold back, and the
    others' retry names them, present and answering."""
    monkeypatch.setattr(Peer, "join_void", _join_unless_catching_up)
    assert _failure(monkeypatch, 100, seats=4, hostile="aside").prop == "S2"


def test_the_regression_finds_a_late_signature_closing_under_a_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: a complete round closing the log at our point is applied at once,
    though another party signed a retry there naming us, which can complete without us
    (4.5 R3)."""
    monkeypatch.setattr(agreement_module.Ballots, "_waits", lambda self, *args: False)
    assert _failure(monkeypatch, 2035, seats=6, hostile="aside").prop == "S1"


# schedules of the `stand` strategy (drawn by name only): a silent party signs a retry at
# the point of the round that named it and sends it about a timeout into the next step, so
# that clocks at different rates note it some before and some after their timeout. (seed,
# seats):
# - 12 at six seats: party 3 noted party 2's vote before its timeout and did not join the
#   void the others signed naming party 2; their retry, twice the timeout later, named
#   parties 2 and 3 (S2).
STAND = [(12, 6)]


@pytest.mark.parametrize(("seed", "seats"), STAND)
def test_a_standing_retry_noted_at_different_moments_names_nobody_present(
    seed: int, seats: int
) -> None:
    outcome = run(seed, seats=seats, hostile="stand")
    assert set(outcome.hostile.values()) == {"stand"}


def test_the_regression_finds_a_retry_that_does_not_wait_for_a_standing_vote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: a retry counts its twice the timeout from our signature, whatever
    standing retry of a party it names we noted since (4.5 R2)."""
    monkeypatch.setattr(Presence, "standing_ends", lambda self, key, limit: None)
    assert _failure(monkeypatch, 12, seats=6, hostile="stand").prop == "S2"


# schedules of the strategies of a review of the vote rules (drawn by name only), each of
# which broke a property before the rule named. (seed, seats, strategy):
# - holdclaim 155 at six seats: a party claimed, to one peer only, to be catching up; that
#   peer held back from the retry naming it, and the others' next retry named that peer (S2;
#   4.5 R2: a claim keeps no party out of `Q`);
# - decoy 189 and 82 at four: a silent party's retry, standing behind the log, sent to one
#   peer, and two votes of other rounds at its index to the others, which then kept it
#   nowhere and named that peer (S2; 4.6 "What a peer keeps for it": slots by point);
# - badprev 257 at four (with an honest crash: S1) and 5 at four (L1): a last vote signed
#   with another `p` completed a round every honest table then stood half way through for
#   good (4.5 rule 1: a round's votes name one `p`);
# - floodequiv 0 and crowd 100 at four: a flood of voids crowded a dispute's votes out of
#   every store, and the table stood for good (L1) or named the party that signed it (S2)
#   (4.6 "What a peer keeps for it": votes on our log, two per slot, no shared cap).
REVIEWED = [(155, 6, "holdclaim"), (189, 4, "decoy"), (82, 4, "decoy"), (257, 4, "badprev"),
            (5, 4, "badprev"), (0, 4, "floodequiv"), (100, 4, "crowd")]  # fmt: skip


@pytest.mark.parametrize(("seed", "seats", "strategy"), REVIEWED)
def test_the_reviewed_abuses_of_votes_break_nothing(seed: int, seats: int, strategy: str) -> None:
    outcome = run(seed, seats=seats, hostile=strategy)
    assert set(outcome.hostile.values()) == {strategy}


def test_the_regression_finds_a_claim_that_holds_a_peer_back_from_a_retry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: a retry leaves out of `Q` a party whose claims of the log count,
    at the peers the claims reached (4.5 R2)."""
    absent = Presence.absent

    def with_claims(self: Presence, *args: Any, claims: bool = True) -> tuple[int, ...]:
        return absent(self, *args)

    monkeypatch.setattr(Presence, "absent", with_claims)
    assert _failure(monkeypatch, 155, seats=6, hostile="holdclaim").prop == "S2"


def test_a_schedule_replays_alike() -> None:
    """A seed is a run: the same seed twice does the same, event for event."""
    assert run(FIRST + 3) == run(FIRST + 3)


def test_remembered_work_changes_no_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sim.memo` only makes pure work quicker: a schedule (two seats, a party that restarts
    from old files, an honest one that crashes and resumes) run with everything computed
    afresh, its honest table too, does the same event for event."""
    seed = 100_050

    def traced() -> tuple[Any, int]:
        seen: list[int] = []
        at_end = checks.Watch.at_end

        def keep(self: checks.Watch, *, audit: bool = True) -> None:
            seen.append(hash(tuple(self.world.trace)))
            at_end(self, audit=audit)

        with monkeypatch.context() as m:
            m.setattr(checks.Watch, "at_end", keep)
            outcome = run(seed)
        return outcome, seen[0]

    remembered = traced()
    monkeypatch.setattr(schedule_module, "_TABLES", {})
    monkeypatch.setattr(schedule_module, "remembered", contextlib.nullcontext)
    assert traced() == remembered
    assert remembered[0].hostile == {1: "oldvotes"}


def test_the_regression_holds() -> None:
    run_params(FOUND, "tests/sim/test_simulator.py::FOUND")


# Seeds whose schedules broke a property before a fault the simulator found was mended.
SKIPPED_ROUND = 1039  # a restarted peer's sync that leaves out a round it does not hold
CROWDED_OUT = 20216  # an entry held for the branch a roll-back kept, crowded out before it
GAVE_UP = 2600  # a void given up at a point, and another of the same try signed there
ROUND_GIVEN_UP = 22676  # a round completed by the others where we had given our void up
VOTE_STANDS = 60362  # a late round behind the point where we had signed a void since
VOTE_STANDS_TOO = 62465  # the same, at the peer that proposed the round the others closed on
HOSTILE_MEETING = 61609  # two groups that could not meet, each closed with one hostile party
UNTAKEN_BUSY = 60482  # a round behind the log that does not apply kept the peer "busy"
BUSY_AGAIN = 60041  # UNTAKEN_BUSY's fault, met again since a "replace" waits for the seats
HOSTILE_HOST = 60595  # at two seats a hostile party 0 may close naming party 1 (no S2)
LOST_DISPUTE = 62702  # a party restarted past an equivocation it never heard of
EQUIVOCATED_VOTE = 40157  # the vote an equivocator also signed, the one its round needed
SIGNED_TWICE = 630001  # GAVE_UP's fault, met again since a void given up there stands again
DISPUTE_KEPT = 68724  # a roll-back past rounds signed while a dispute below them stood
DISPUTE_KEPT_TOO = 67488  # the same at six seats
REPLACED_TOO_SOON = 72358  # the host's "replace" before the seats were drawn, refused once whole
REFUSED_RIVAL = 73798  # a lone void its author also signed otherwise, refused without end
# REFUSED_RIVAL's fault, met again since declines changed what that seed draws (with
# `--seats 6 --hostile lone`)
REFUSED_RIVAL_LONE = 890050
TAIL_LOST = 501615  # the step that closed the log, sent once to a party on another branch, lost
HEIR_CUT_BACK = 507524  # an heir's log cut back past its own entries, replayed with new keys
HELD_SIGNER = 507400  # a party held by a dispute its retry named, at the end of the log, as away
STOPPED_FOR_NOTHING = 509651  # two entries of a party the step no longer waited for stopped it
STANDS_AGAIN = 509557  # a void given up for an entry then refused: agreed to nothing, held
LONE_REFUSED = 630291  # a lone round refused at our point: our own entry there never made
SIGNED_BEHIND_VOTE = 514137  # a dispute round we signed, held back by our later vote at the end
GIVEN_UP_SPLIT = 543072  # votes given up for a late entry, the round completed by a cut-off signer
NOT_DECLINED = 544568  # a signer bound by its vote, the decline that frees it made only at times
# a dispute signed by a party whose vote at a later point was out, the round of that vote
# completed, and a peer that took it counted the disputed entry settled (`--hostile equivocate`)
VOTED_PAST = 880219
EVIDENCE_HELD = 548050  # two entries, held ahead, of a party the step they fell in did not wait for
# four seats, party 2 equivocates at 89: party 0 signs the dispute there having built nothing
# on it, and its bot moves at 97 before the round completes
MOVED_IN_DISPUTE = 568698
# six seats, parties 0 and 1 cut off: party 0 signs a void at 48, the others go past it and
# close a round at 51 naming 0 and 1, settled before they hear that void, so none declines it
VOTED_BEYOND = 578429
# four seats, party 1 replaced twice: the second heir's seat was once taken by the checks for
# the first party's own (they knew a seat by its object's id, which a retired seat gives up)
SECOND_HEIR = 601594
# three seats, party 2 (`garbage`) signs two entries for index 213, party 1's place, on the
# step's `p`: party 0, at 213, stopped there (the step waited for party 2, at 214); party 1,
# past 213, refused them, went on, and with party 2 named party 0, present and answering
OUT_OF_PLACE = 732817


REGRESSIONS = [SKIPPED_ROUND, CROWDED_OUT, GAVE_UP, ROUND_GIVEN_UP, VOTE_STANDS, VOTE_STANDS_TOO,
               HOSTILE_MEETING, UNTAKEN_BUSY, HOSTILE_HOST, LOST_DISPUTE, EQUIVOCATED_VOTE,
               SIGNED_TWICE, DISPUTE_KEPT, DISPUTE_KEPT_TOO, REPLACED_TOO_SOON,
               REFUSED_RIVAL, TAIL_LOST, HEIR_CUT_BACK,
               HELD_SIGNER, STOPPED_FOR_NOTHING, STANDS_AGAIN, LONE_REFUSED,
               SIGNED_BEHIND_VOTE, GIVEN_UP_SPLIT, NOT_DECLINED, EVIDENCE_HELD,
               MOVED_IN_DISPUTE, VOTED_BEYOND, SECOND_HEIR, OUT_OF_PLACE]  # fmt: skip


def _failure(
    monkeypatch: pytest.MonkeyPatch, seed: int, seats: int | None = None, hostile: str | None = None
) -> Failure:
    """The failure schedule `seed` (with `seats` and `hostile` as `python -m sim` takes them)
    must raise with a fault put back (the tables schedules fork from are built again, with
    the fault in them)."""
    monkeypatch.setattr(schedule_module, "_TABLES", {})
    with pytest.raises(Failure) as got:
        run(seed, seats=seats, hostile=hostile)
    return got.value


@pytest.mark.parametrize("seed", REGRESSIONS)
def test_the_regression_seeds_hold(seed: int) -> None:
    run(seed)


def test_the_regression_finds_a_stop_for_entries_out_of_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: an equivocation at the end of the log stops the table wherever
    the step waits for its author, though the index is another party's place."""
    monkeypatch.setattr(Table, "_takes", lambda self, index, author: author in self.waiting_for)
    assert _failure(monkeypatch, OUT_OF_PLACE).prop == "S2"


def test_the_regression_finds_a_void_signed_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Put back the fault: a peer that gave its void up forgets what it signed at that
    point, signs another void of the same try there, and is named an equivocator."""
    monkeypatch.setattr(agreement_module.Ballots, "may_sign", lambda self, point, motion: True)
    assert _failure(monkeypatch, SIGNED_TWICE).prop == "S4"


def test_the_regression_finds_an_equivocated_vote_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: of the voids an author signed for one index and try, a peer
    holds behind its log only the first it heard. Party 1 signed two votes for its seat in
    the round that voided party 0, which had crashed; party 0 came back, made its move at
    that index, and heard the vote the round did not use first: it never held the round
    whole, and kept its own branch."""

    def keep_one(self: ledger_module.Ledger, entry: Entry) -> None:
        point = self.point(entry)
        if point is not None:
            self.behind.setdefault((point, entry.author, bodies.void_try(entry.body), 0), entry)

    monkeypatch.setattr(ledger_module.Ledger, "keep", keep_one)
    assert _failure(monkeypatch, EQUIVOCATED_VOTE).prop == "S1"


def test_the_regression_finds_a_vote_given_up_while_its_round_completes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: a signed void binds nobody once a party it names comes after all,
    declined or not. (Four seats, party 2 crashes, the others sign the void naming it and
    party 1 is cut off; party 2 comes back, parties 0 and 3 give their votes up and go on;
    when the partition heals party 1 completes the round with those votes: two logs.)"""
    monkeypatch.setattr(voter_module.Voter, "bound", lambda self: None)
    assert _failure(monkeypatch, GIVEN_UP_SPLIT).prop == "S1"


def test_the_regression_finds_a_signer_held_by_a_vote_nobody_declines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: nobody declines a void it never signs. (Three seats, party 0
    signs a void naming party 1 during a partition while party 2 is down; the partition
    heals and party 1's entries come, but party 0's vote binds it, and only party 2, the
    other party the round needs, can free it. Without 2's decline when it comes back, party
    0 stands at the point and the others name it, present and answering.)"""
    monkeypatch.setattr(voter_module.Voter, "may_answer", lambda self, party, vote: False)
    assert _failure(monkeypatch, NOT_DECLINED).prop == "S2"


def test_two_groups_a_hostile_party_closed_apart_are_the_checks_one_exception() -> None:
    """The check's exception is narrow: two logs that part are excused from S1 only where
    the void rounds after the parting point meet in hostile signers alone (4.6, "Its limit":
    a hostile party signed with two groups of honest parties that could not reach each
    other); a round signed on both sides by an honest party is a fork."""
    world: Any = types.SimpleNamespace(n=3, honest=[0, 2])

    def log(side: str, *tail: tuple[str, int]) -> list[Any]:
        """Three entries every log holds, then `tail`, entries of this `side` only."""
        common = [types.SimpleNamespace(kind="move", author=p, side="") for p in (0, 1, 2)]
        return common + [types.SimpleNamespace(kind=k, author=a, side=side) for k, a in tail]

    one = log("A", ("void", 0), ("void", 1))
    assert checks._apart(world, one, log("B", ("void", 1), ("void", 2)))
    assert not checks._apart(world, one, log("B", ("void", 0), ("void", 2)))
    assert not checks._apart(world, one, log("B", ("move", 2)))
    assert not checks._apart(world, one, one)


def test_the_regression_finds_a_peer_busy_with_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Put back the fault: `busy` counts a round behind the log that was tried and does not
    apply there, which `work` then skips: the client loops on `busy` for ever."""

    def busy(self: Peer) -> bool:
        t = self.table
        return not t.closed and bool(
            self._voter.due(self._overdue)
            or self._next() is not None
            or (t.voiding is None and self._ledger.behind_log() and self._ledger.rounds_behind())
        )

    monkeypatch.setattr(Peer, "busy", property(busy))
    got = _failure(monkeypatch, BUSY_AGAIN)
    assert got.prop == "L1" and "busy with nothing" in str(got)


def test_a_failure_says_how_to_replay_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schedule that breaks a property names its seed, the property, what was seen, and the
    one command that replays it."""

    def broken(self: checks.Watch) -> None:
        raise checks.Violation("S1", "seen")

    monkeypatch.setattr(checks.Watch, "after_event", broken)
    with pytest.raises(Failure) as got:
        run(FIRST)
    assert got.value.seed == FIRST and got.value.prop == "S1"
    assert f"replay: python -m sim --seed {FIRST} --trace" in str(got.value)


@pytest.mark.slow
def test_the_soak() -> None:
    """At least 100,000 schedules (`BURACO_P2P_SIM_SOAK`), on every core."""
    from concurrent.futures import ProcessPoolExecutor

    jobs = os.cpu_count() or 1
    with ProcessPoolExecutor(jobs) as pool:
        counts = list(pool.map(_soak_part, [(k, jobs) for k in range(jobs)]))
    assert sum(counts) >= SOAK


def _soak_part(args: tuple[int, int]) -> int:
    k, jobs = args
    return len(explore(100_000 + k, count=(SOAK - k + jobs - 1) // jobs, step=jobs))


WITHHELD_DISPUTES = [(43, 6), (10, 4)]  # schedules drawn with the two parties set below


def _withheld_dispute(monkeypatch: pytest.MonkeyPatch, seed: int, seats: int) -> Params:
    """Schedule `seed` at `seats` seats with no crash or partition, where one hostile party
    equivocates and another withholds every void it signs, among them the one that settles
    the equivocation (and party 0 is honest: 4.6's table promises S2 and L1 there)."""
    kept = hostile_module.Withhold.__init__

    def withhold_voids(
        self: hostile_module.Withhold, rng: random.Random, parties: int, me: int
    ) -> None:
        kept(self, rng, parties, me)
        self.kind, self.reach, self.after = "void", [], 0.0

    monkeypatch.setattr(hostile_module.Withhold, "__init__", withhold_voids)
    hostile = {2: "equivocate", 3: "withhold"} if seats == 4 else {3: "equivocate", 5: "withhold"}
    return dataclasses.replace(Params.draw(seed, seats), hostile=hostile, crashes=[],
                               partitions=[])  # fmt: skip


@pytest.mark.parametrize(("seed", "seats"), WITHHELD_DISPUTES)
def test_a_dispute_void_withheld_is_retried(
    monkeypatch: pytest.MonkeyPatch, seed: int, seats: int
) -> None:
    """The round that settles an equivocation behind the logs needs every other party. One
    that never signs it no longer holds it: after twice the timeout the next try, "end",
    names it too."""
    run_params(_withheld_dispute(monkeypatch, seed, seats), "a dispute withheld")


@pytest.mark.parametrize(("seed", "seats"), WITHHELD_DISPUTES)
def test_a_dispute_void_withheld_breaks_s2_or_l1_without_its_retry(
    monkeypatch: pytest.MonkeyPatch, seed: int, seats: int
) -> None:
    """Put back the fault: no retry of a dispute (the parties that built nothing past its
    point make no entry while it waits)."""
    params = _withheld_dispute(monkeypatch, seed, seats)
    monkeypatch.setattr(Peer, "_held_dispute", lambda self, now, linked, limit: Output())
    with pytest.raises(Failure) as got:
        run_params(params, "a dispute withheld")
    assert got.value.prop == "L1"


# At four seats party 2 equivocates and party 3 holds its voids back; party 0 signed the void
# that settles it first, having built nothing past it, and made no entry since; party 1 had
# gone on and named party 0 silent at the end of its log, then stood by that vote while party
# 0, on the settled branch, named party 1 (S2). A party that waits for a dispute's round we
# signed too is not keeping the end of our log waiting.
DISPUTE_WAITED = Params(
    seed=29, seats=4, deal=0, stage=5, hostile={2: "equivocate", 3: "late"},
    void_actions=["void", "void", "end", "void"], drop=0.0, dup=0.02, delay=(0.001, 0.05),
    rates=[1.0834908524271516, 1.0084536484176172, 1.0672160084999407, 0.9398683435428254],
    crashes=[], partitions=[], heal=2.2214935885133578, horizon=20.221493588513358,
)  # fmt: skip

# At four seats party 2 equivocates early, walks out, and the host seats an heir for it: the
# evidence under its retired key names the hostile identity, not the honest heir (S4).
RETIRED_EQUIVOCATOR = Params(
    seed=177, seats=4, deal=0, stage=1, hostile={2: "equivocate", 3: "late"},
    void_actions=["replace", "void", "end", "void"], drop=0.01, dup=0.02, delay=(0.001, 0.05),
    rates=[1.0839505225223183, 1.00972209492008, 1.0856970158426236, 1.057546817367519],
    crashes=[(2, 2.452134675312548, 2.535446374665129)], partitions=[],
    heal=2.9565774461740144, horizon=20.956577446174016,
)  # fmt: skip


# At six seats party 3 equivocates and party 5 withholds; party 4 crashes. Party 0 signed the
# void that settles the equivocation having built nothing past it, then signed the "replace"
# round for party 4 at the end of its log, which built on the entry there: the heir's final
# point passed it while party 0's stayed, and the dispute's retry cut a hundred entries the
# heir held final (S1).
DISPUTE_THEN_REPLACE = Params(
    seed=43, seats=6, deal=1, stage=2, hostile={3: "equivocate", 5: "withhold"},
    void_actions=["replace", "end", "void", "void", "void", "void"], drop=0.0, dup=0.0,
    delay=(0.001, 0.1),
    rates=[1.0669017322301526, 0.9257408555929377, 0.9773703613835826, 1.095640102783853,
           0.9543872007357462, 0.9363679369940239],
    crashes=[(4, 1.3264856278530492, 1.8660661783483297)], partitions=[],
    heal=2.2152104507428465, horizon=26.215210450742845,
)  # fmt: skip

# The same two hostile parties, parties 4 and 5 crashing: a round of a lower try at the
# equivocated index, taken while a later try signed there could still complete, ended with
# party 0, answering, named silent in its own log (S2).
LOWER_TRY = Params(
    seed=50, seats=6, deal=1, stage=1, hostile={3: "equivocate", 5: "withhold"},
    void_actions=["void", "void", "void", "void", "end", "void"], drop=0.0, dup=0.1,
    delay=(0.001, 0.1),
    rates=[1.0649807428334044, 1.0587657148995688, 1.028624717642079, 0.9860584288920848,
           0.9454442208073277, 0.9532360342126555],
    crashes=[(4, 0.981820537359859, 2.0616874651195016),
             (5, 0.4742920527422699, 2.4932941644316915)],
    partitions=[], heal=3.0935279036092274, horizon=27.09352790360923,
)  # fmt: skip


# At four seats party 2 equivocates at 41 and party 3 walks out with a retired key; parties 0
# and 3 are cut off for a second and a half. Party 0 had signed a round at the end of its
# log naming party 3, then the void at 41 that settles the equivocation and its retry, and
# stood by its own vote while that retry completed behind it: the others took the retry and
# closed there, party 0 stayed (S1 on whole logs).
# the same fault where the round behind is the dispute's first try (`--seats 6 --hostile
# equivocate`): a party that voted past an equivocated index signs its dispute only after
# one that did not, so the kept schedule above no longer reaches it
DISPUTE_BEHIND_VOTE = 3254
RETRY_BEHIND_VOTE = Params(
    seed=3003, seats=4, deal=0, stage=0, hostile={2: "equivocate", 3: "retired"},
    void_actions=["end", "void", "void", "void"], drop=0.0, dup=0.0, delay=(0.001, 0.05),
    rates=[1.0944163109798584, 1.0740985236578187, 1.0211690082254088, 1.0160008460438938],
    crashes=[], partitions=[(frozenset({0, 3}), 0.723059624650387, 2.147474503417048)],
    heal=2.923675959177872, horizon=20.92367595917787,
)  # fmt: skip


@pytest.mark.parametrize(
    "params",
    [DISPUTE_WAITED, RETIRED_EQUIVOCATOR, DISPUTE_THEN_REPLACE, LOWER_TRY, RETRY_BEHIND_VOTE],
    ids=["waited", "heir", "replace", "lower", "retry"],
)
def test_the_regression_schedules_hold(params: Params) -> None:
    run_params(params, "a kept schedule")


def test_the_regression_finds_a_dispute_left_behind_our_vote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: our vote at the end of our log stands against a complete round of
    a dispute behind it that we signed too. (Six seats, party 3 equivocates at 34; parties 0
    and 5 crash and the others sign a void at 40 naming party 0. Party 0 comes back, having
    built nothing past 34, and signs the dispute there; the others, built past it, follow.
    Party 1 stood by its vote at 40 while the dispute round completed behind it: the others
    took that round, waited for party 1 past it, and closed naming it.)"""
    run(DISPUTE_BEHIND_VOTE, seats=6, hostile="equivocate")
    monkeypatch.setattr(ledger_module.Ledger, "signed", lambda self, point, round_: False)
    assert _failure(monkeypatch, DISPUTE_BEHIND_VOTE, 6, "equivocate").prop == "S1"


def test_the_regression_finds_a_dispute_round_held_behind_our_vote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Put back the fault: only a retry of a dispute we signed comes before our vote at the
    end of our log. At six seats party 3 equivocates at 235 and party 5 crashes; party 0,
    which had built past 235, signs the void there once another had, then a void at the end
    of its log naming party 5. When the round at 235 completes, that later vote held party 0
    on its branch for twice the timeout, while the others, having taken the round, waited for
    party 0's entry past it and named it silent after one (S2)."""

    def retry_only(self: ledger_module.Ledger, point: int, round_: list[Entry]) -> bool:
        held = self.mine.get(point)
        return held is not None and bodies.void_try(held.body) > 0 and held in round_

    monkeypatch.setattr(ledger_module.Ledger, "signed", retry_only)
    failure = _failure(monkeypatch, SIGNED_BEHIND_VOTE)
    assert failure.prop == "S2"


# At four seats party 2 equivocates; party 1 signs the void that settles it and crashes at
# once. The others complete that round with its vote, name it silent and close. It restarts
# from its own branch and asked for the log from its length: the answer began past the
# round at the equivocated index, which it never held whole, and it stayed apart (S1). It
# asks from the points behind its log of the voids it saved (`Peer.sync_point`).
SYNC_FROM_DISPUTE = Params(
    seed=528, seats=4, deal=0, stage=2, hostile={2: "equivocate"},
    void_actions=["end", "void", "end", "void"], drop=0.0, dup=0.02, delay=(0.001, 0.1),
    rates=[1.0288844862280226, 1.0349539816726765, 0.9759403106391247, 1.0562801362272582],
    crashes=[(1, 1.6615459550264415, 2.162668946136794)], partitions=[],
    heal=3.5432691053859573, horizon=21.543269105385956,
)  # fmt: skip


def test_a_restarted_party_asks_from_its_dispute(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule holds; and fails with the fault put back: the restarted party asks for
    the log from its own length."""
    run_params(SYNC_FROM_DISPUTE, "a kept schedule")
    monkeypatch.setattr(Peer, "sync_point", property(lambda self: len(self.table.log)))
    with pytest.raises(Failure) as got:
        run_params(SYNC_FROM_DISPUTE, "a kept schedule")
    assert got.value.prop == "S1"


# At six seats party 3 equivocates and party 5 walks out with a retired key; party 4 crashes,
# and parties 3 and 5 are cut off. Party 0 retried the round naming party 5 just before the
# others completed its lower try; its retry stood for twice the timeout (R3) while the
# others, on the lower round, named it silent at the next step after one timeout (S2). A
# party whose retry stands behind our log is answering until it has had time to come.
STANDING_RETRY = Params(
    seed=3118, seats=6, deal=1, stage=1, hostile={3: "equivocate", 5: "retired"},
    void_actions=["void", "void", "end", "void", "end", "void"], drop=0.0, dup=0.02,
    delay=(0.001, 0.1),
    rates=[1.0950235123973129, 0.9171653013039458, 0.9560488403761656, 0.9329563181393733,
           1.0765224389753851, 0.9435661523459504],
    crashes=[(4, 1.6651350192296532, 1.2889022988199244)],
    partitions=[(frozenset({3, 5}), 2.4053279705762782, 4.2811638488744945)],
    heal=3.8084582841224797, horizon=27.80845828412248,
)  # fmt: skip


def test_a_party_standing_by_its_retry_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule holds; and fails with the fault put back: a retry standing behind our
    log is not counted as answering."""
    run_params(STANDING_RETRY, "a kept schedule")
    monkeypatch.setattr(ledger_module.Ledger, "standing_retry", lambda self, party: None)
    with pytest.raises(Failure) as got:
        run_params(STANDING_RETRY, "a kept schedule")
    assert got.value.prop == "S2"


# At four seats party 2 alone equivocates at 14, and party 1 is cut off for two seconds.
# Parties 0 and 3 signed the void at 14 that settles it and, while it stood open, the void
# at the end of their logs naming party 1, which closed there with the equivocator's vote;
# the dispute's round closed too, at 14 and at its retry, and cut their logs back, while
# party 1, back, took the later round (S1 on final prefixes). A party held by a dispute
# signs no void at the end of its log.
HELD_BY_DISPUTE = Params(
    seed=2100, seats=4, deal=1, stage=0, hostile={2: "equivocate"},
    void_actions=["void", "void", "void", "void"], drop=0.05, dup=0.02, delay=(0.001, 0.1),
    rates=[0.9629521330603457, 1.0907955567883276, 1.0943739206683831, 0.9684779966875556],
    crashes=[], partitions=[(frozenset({1}), 0.2939978626530506, 2.6512115142093116)],
    heal=2.6537088284232073, horizon=20.653708828423206,
)  # fmt: skip


def test_a_party_held_by_a_dispute_signs_no_void_past_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule holds; and fails with the fault put back: a dispute open behind our log
    does not hold our voids at its end."""
    run_params(HELD_BY_DISPUTE, "a kept schedule")
    monkeypatch.setattr(Peer, "_held_by_dispute", lambda self: False)
    with pytest.raises(Failure) as got:
        run_params(HELD_BY_DISPUTE, "a kept schedule")
    assert got.value.prop == "S1"


def test_the_regression_finds_a_refused_void_offered_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Put back the fault: the second void a hostile party signed for one slot (a lone
    round naming every other party) stays held once the table refused it, so it is offered
    as the next void again and again and the peer never rests (L1; the client, which loops on
    `busy` too, would spin and grow without end)."""
    def drop(self: agreement_module.Ballots, entry: Entry) -> None:
        slot = self.held.get(entry.index, {})
        key = (entry.author, bodies.void_try(entry.body))
        if slot.get(key) is entry:
            del slot[key]
        if not slot:
            self.held.pop(entry.index, None)

    run(REFUSED_RIVAL_LONE, seats=6, hostile="lone")
    monkeypatch.setattr(agreement_module.Ballots, "drop", drop)
    assert _failure(monkeypatch, REFUSED_RIVAL_LONE, 6, "lone").prop == "L1"


def test_a_party_that_voted_past_an_equivocation_disputes_it_only_after_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Six seats, parties 2 and 3 equivocate, party 4 crashes. Put back the fault: a party
    whose vote at a later point is out counts as having built nothing on the equivocated
    entry, so it signs the dispute there on its own, and the others follow it. The round of
    its vote completes too; party 4, back, takes it, counts the equivocated index settled and
    cannot follow the others' dispute round: two logs."""
    run(VOTED_PAST, hostile="equivocate")
    monkeypatch.setattr(ledger_module.Ledger, "voted_past", lambda self, party, index: False)
    assert _failure(monkeypatch, VOTED_PAST, None, "equivocate").prop == "S1"


def test_a_party_that_signed_a_dispute_makes_no_entry_until_its_round_is_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four seats, party 2 equivocates at 89. Party 0 signs the dispute void there, having
    built nothing on the entry (4.6 rule 3 (a)); party 1 follows it. Put back the fault (the
    dispute held the entries a peer owes, not its moves; here it holds none), so party 0's
    bot moves at 97; party
    3, which holds that move, no longer counts party 0 as one that built nothing past 89 and
    never follows; the log goes on, 89 settles for party 3, and parties 0 and 1 close the
    dispute's retry naming party 3 silent though it answers: two logs."""
    held: list[bool] = []  # party 0 disputing: whether the table offered it its turn then
    after_event = checks.Watch.after_event

    def watch(self: checks.Watch) -> None:
        peer = self.world.seats[0].peer
        if peer is not None and peer.disputing:
            held.append(peer.on_turn)
        after_event(self)

    with monkeypatch.context() as m:
        m.setattr(checks.Watch, "after_event", watch)
        outcome = run(MOVED_IN_DISPUTE)
    assert outcome.hostile == {2: "equivocate"} and outcome.closed == 3
    assert held and not any(held)
    monkeypatch.setattr(Peer, "disputing", property(lambda self: False))
    assert _failure(monkeypatch, MOVED_IN_DISPUTE, None, None).prop in ("S1", "S2")


def test_a_vote_no_party_declines_is_released_by_a_void_signed_past_its_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Six seats, party 1 hostile (`claims`), parties 0 and 1 cut off from the rest for a
    while. Party 0 signs a void at 48 naming party 5; parties 2 to 5 go on past 48 and close
    a round at 51 naming parties 0 and 1, and their settled point passes 48 before party 0's
    void reaches them: nobody declines it (a void below one's settled point is moot). Party
    0 holds their voids at 51, whose `p` commits each of them to the entry at 48: none of
    them ever signs at 48, so party 0 follows the log and comes back. Put back the fault
    (only a void of party 0's own motion further on releases it): party 0 stands at 48 for
    good, the new hand at 55 waits for it, and the others, who cannot agree whom to name,
    hold the table. (Since a claim no longer keeps a peer from joining, the others agree
    and close without party 0, which stands at 48 for good: it never closes; with that put
    back too, the table stands as before.)"""
    outcome = run(VOTED_BEYOND)
    assert outcome.hostile == {1: "claims"} and outcome.closed == 5
    monkeypatch.setattr(agreement_module.Ballots, "passed", lambda self, length: False)
    monkeypatch.setattr(schedule_module, "_TABLES", {})
    assert run(VOTED_BEYOND).closed == 4
    monkeypatch.setattr(Peer, "join_void", _join_unless_catching_up)
    assert _failure(monkeypatch, VOTED_BEYOND).prop == "L1"
