"""A host whose address changed: the signed `moved` record, whom to dial, re-join codes.

The pure parts (moved.py, rejoin.py) on values; `Moves` (moving.py) against the small fake
of `MeshCore` (mesh_fake.py), with a hostile joiner that forges or alters the host's word:
nothing it sends is dialed, its link is closed naming it, and a newer word from the host
is passed on to the other joiners but never back to the one that brought it. The whole way
back over a real mesh, in the namespace lab, is test_homes_renumber.py.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, cast

import pytest
import trio
import trio.testing
from mesh_fake import SECRET, TABLE, FakeCore, as_core, roster_of

from buraco_p2p.net.channel.identity import Identity, PeerKey
from buraco_p2p.net.channel.outbox import LinkRun
from buraco_p2p.net.mesh.moved import (
    Moved,
    MovedRecordError,
    host_dial_order,
    make_moved,
    parse_moved,
    reach_plan,
    replace_candidates,
)
from buraco_p2p.net.mesh.moving import Moves, keep_address
from buraco_p2p.net.reach.candidates import Candidate, CandidateKind
from buraco_p2p.net.reach.invite import Endpoint
from buraco_p2p.net.reach.rejoin import RejoinCode, RejoinCodeError, looks_like_rejoin
from buraco_p2p.net.table.table import HostTable, Member
from buraco_p2p.play.line import take_rejoin_code

HOST, ANA, BIA, CAIO = (Identity.generate(n) for n in ("host", "ana", "bia", "caio"))
LAN = Endpoint.parse("10.0.1.2", 4600)
OLD = Endpoint.parse("198.51.100.11", 4600)
NEW = Endpoint.parse("198.51.100.111", 4600)
MOVED_TO = Moved(1, (Candidate(CandidateKind.MAPPED, NEW),))


def test_the_host_signs_its_new_addresses_and_a_joiner_checks_them() -> None:
    record = make_moved(HOST, TABLE, MOVED_TO)
    assert record[0] == "moved" and record[1] == 1 and record[2] == [["198.51.100.111", 4600, 1]]
    assert parse_moved(record, HOST.public, TABLE, "ana") == MOVED_TO


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: [*r[:3], ANA.sign(b"x")], "did not sign"),  # a joiner's own signature
        (lambda r: [r[0], 2, r[2], r[3]], "did not sign"),  # a serial raised
        (lambda r: [r[0], r[1], [["198.51.100.66", 4600, 1]], r[3]], "did not sign"),
        (lambda r: [r[0], r[1], [["198.51.100.111", 4600, 2]], r[3]], "did not sign"),
        (lambda r: r[:3], "malformed moved record"),
        (lambda r: [r[0], 0, r[2], r[3]], "malformed moved record"),
        (lambda r: [r[0], True, r[2], r[3]], "malformed moved record"),
        (lambda r: [r[0], r[1], [], r[3]], "malformed moved record"),
        (lambda r: [r[0], r[1], [["198.51.100.111", 4600, 1]] * 17, r[3]],
         "malformed moved record"),
        (lambda r: [r[0], r[1], [["198.51.100.111", 4600, 7]], r[3]], "malformed address"),
        (lambda r: [r[0], r[1], [["fe80::1%eth0", 4600, 0]], r[3]], "malformed address"),
        (lambda r: [r[0], r[1], [["198.51.100.111", 0, 1]], r[3]], "does not parse"),
        (lambda r: [r[0], r[1], [["host.example", 4600, 1]], r[3]], "does not parse"),
        (lambda r: [r[0], r[1], [["::ffff:198.51.100.111", 4600, 1]], r[3]], "plain form"),
        (lambda r: [*r[:3], r[3][:63]], "malformed moved record"),
    ],
    ids=["forged", "serial", "address", "kind", "short", "serial-0", "serial-bool", "none",
         "17-addresses", "kind-7", "zone-id", "port-0", "name", "mapped-form", "sig-63"],
)  # fmt: skip
def test_a_moved_record_not_the_hosts_is_refused_naming_the_sender(change: Any, why: str) -> None:
    record = change(make_moved(HOST, TABLE, MOVED_TO))
    with pytest.raises(MovedRecordError, match=why) as caught:
        parse_moved(record, HOST.public, TABLE, "peer ana")
    assert "peer ana" in str(caught.value)


def test_a_record_of_another_table_is_refused() -> None:
    record = make_moved(HOST, bytes(16), MOVED_TO)
    with pytest.raises(MovedRecordError, match="did not sign"):
        parse_moved(record, HOST.public, TABLE, "ana")


def test_new_addresses_replace_those_of_their_kind_and_own_interfaces_stay() -> None:
    kinds = {LAN: CandidateKind.HOST, OLD: CandidateKind.MAPPED}
    found = (Candidate(CandidateKind.MAPPED, NEW),)
    assert replace_candidates((LAN, OLD), kinds, found) == (
        (NEW, LAN), {NEW: CandidateKind.MAPPED, LAN: CandidateKind.HOST}
    )  # fmt: skip
    # the same answer again, or nothing at all, moves nothing
    assert replace_candidates((LAN, OLD), kinds, (Candidate(CandidateKind.MAPPED, OLD),)) is None
    assert replace_candidates((LAN, OLD), kinds, ()) is None


def test_whom_to_dial() -> None:
    seen = Endpoint.parse("198.51.100.13", 4610)
    lan = Endpoint.parse("10.0.3.2", 4610)
    plan = reach_plan((lan,), seen, host_mapped=False)
    assert plan.dial == (lan,) and plan.punch == (seen,)
    # its mapped address: dialed, not punched
    assert reach_plan((lan, seen), seen, host_mapped=False).punch == ()
    # a host with a mapping is dialed through it: no punch to collide with the joiner's dial
    assert reach_plan((lan,), seen, host_mapped=True).punch == ()
    assert host_dial_order((NEW,), (OLD, LAN), (LAN, OLD)) == (NEW, OLD, LAN)


def test_a_rejoin_code_carries_the_new_addresses_for_this_table_only() -> None:
    code = RejoinCode((Candidate(CandidateKind.REFLEXIVE, NEW),))
    text = code.to_text(SECRET, TABLE)
    assert text.startswith("BRJ-") and looks_like_rejoin(" brj-" + text[4:].lower())
    assert RejoinCode.from_text(text.lower().replace("-", " "), SECRET, TABLE) == code
    with pytest.raises(RejoinCodeError, match="does not belong to this table"):
        RejoinCode.from_text(text, SECRET, bytes(15) + b"\x01")
    with pytest.raises(RejoinCodeError, match="does not belong to this table"):
        RejoinCode.from_text(text, b"\x01" * 16, TABLE)
    changed = text[:-1] + ("A" if text[-1] != "A" else "B")
    with pytest.raises(RejoinCodeError):
        RejoinCode.from_text(changed, SECRET, TABLE)
    with pytest.raises(RejoinCodeError, match="starts with BRJ-"):
        RejoinCode.from_text("BRR-" + text[4:], SECRET, TABLE)


class _Table(FakeCore):
    """The fake with live links to `up` (each run recorded as its peer's key)."""

    def __init__(self, *args: Any, up: tuple[PeerKey, ...] = (), **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.live = set(up)
        self.sent: list[tuple[PeerKey, list[Any]]] = []

    def live_run_or_none(self, key: PeerKey) -> LinkRun | None:
        return cast(LinkRun, key) if key in self.live else None

    def enqueue(self, run: LinkRun, record: list[Any], relay_size: int = 0) -> bool:
        self.sent.append((cast(PeerKey, run), record))
        return True


async def test_a_joiner_passes_the_hosts_word_on_and_a_forgery_changes_nothing() -> None:
    async with trio.open_nursery() as nursery:
        core = _Table(ANA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA, CAIO),
                      up=(BIA.public, CAIO.public))  # fmt: skip
        core.listen_port, core.listen_wildcard = 4610, True
        moves = Moves(as_core(core))
        forged = make_moved(BIA, TABLE, MOVED_TO)  # bia signs "the host moved" itself
        with pytest.raises(MovedRecordError, match="bia"):
            await moves.on_record(BIA.public, forged, "peer bia")
        assert moves.host_addresses == () and core.sent == [] and core.punch_targets == set()
        record = make_moved(HOST, TABLE, MOVED_TO)
        await moves.on_record(BIA.public, record, "peer bia")
        assert moves.host_addresses == (NEW,)
        assert core.sent == [(CAIO.public, record)]  # passed on, not back to bia nor the host
        # the same word again, or an older one, is not passed on again
        await moves.on_record(CAIO.public, record, "peer caio")
        assert core.sent == [(CAIO.public, record)]
        nursery.cancel_scope.cancel()


async def test_a_pasted_code_is_dialed_and_a_reflexive_address_punched() -> None:
    async with trio.open_nursery() as nursery:
        core = _Table(ANA, nursery, is_host=False, roster=roster_of(HOST, ANA, BIA))
        core.listen_port, core.listen_wildcard = 4610, True
        moves = Moves(as_core(core))
        code = RejoinCode((Candidate(CandidateKind.REFLEXIVE, NEW),))
        words = take_rejoin_code(moves, code.to_text(core.mesh_secret, TABLE))
        assert words == "* re-join code accepted: dialing the host at 198.51.100.111:4600 ..."
        assert moves.host_addresses == (NEW,)
        assert core.punch_port == 4610 and NEW in core.punch_targets
        other = code.to_text(b"\x07" * 16, TABLE)  # a code for another table's players
        assert take_rejoin_code(moves, other).startswith("* re-join code refused: ")
        nursery.cancel_scope.cancel()


async def test_the_host_moves_once_per_new_address() -> None:
    async with trio.open_nursery() as nursery:
        core = _Table(HOST, nursery, is_host=True, roster=roster_of(HOST, ANA), up=(ANA.public,))
        core.advertised = (LAN, OLD)
        core.candidate_kinds.update({LAN: CandidateKind.HOST, OLD: CandidateKind.MAPPED})
        core.siblings.table = HostTable(
            TABLE, Member(0, HOST.public, "host", (LAN, OLD)), restore=core.roster
        )
        codes: list[str] = []
        moves = Moves(as_core(core))
        moves.announce = codes.append
        found = (Candidate(CandidateKind.MAPPED, NEW),)
        assert moves.host_moved(found)
        assert core.advertised == (NEW, LAN)
        assert core.siblings.table.roster.host.addresses == (NEW, LAN)
        # the record went on the live link to ana, signed
        ((to, record),) = core.sent
        assert to == ANA.public
        assert parse_moved(record, HOST.public, TABLE, "host") == Moved(1, found)
        assert len(codes) == 1
        code = RejoinCode.from_text(codes[0], core.mesh_secret, TABLE)
        assert code.candidates == found
        assert not moves.host_moved(found)  # the same answer on the next check: no move
        assert len(codes) == 1 and len(core.sent) == 1
        nursery.cancel_scope.cancel()


class _Watched:
    """Just what `keep_address` reads of a mesh: `closed` and its `moves`."""

    def __init__(self) -> None:
        self.closed = False
        self.drops = trio.Event()
        self.moved: list[tuple[Candidate, ...]] = []
        self.moves = self

    async def dropped(self) -> None:
        await self.drops.wait()
        self.drops = trio.Event()

    def host_moved(self, found: tuple[Candidate, ...]) -> bool:
        self.moved.append(found)
        return True


async def test_a_joiner_dropping_its_link_again_and_again_does_not_flood_the_router(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watched = _Watched()
    probes: list[float] = []

    async def probe() -> tuple[Candidate, ...]:
        probes.append(trio.current_time())
        await trio.lowlevel.checkpoint()
        return (Candidate(CandidateKind.MAPPED, NEW),)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(functools.partial(keep_address, as_core(cast(Any, watched)), probe))
        for _ in range(100):  # a drop every 0.1 s for 10 s
            watched.drops.set()
            await trio.sleep(0.1)
        nursery.cancel_scope.cancel()
    assert 2 <= len(probes) <= 3 and len(watched.moved) == len(probes)
    assert all(b - a >= 5.0 for a, b in itertools.pairwise(probes))
