"""The lobby's application messages as docs/protocol.md 2.10 and protocol/vectors/mesh.json
state them: a malformed `ready`, `rules` or `bots` (or a `rules` or `bots` not from the host)
is dropped, marks nothing and is never handed to the match; the well-formed ones mark a seat
ready, show the host's rules and mark the seats the host names as its bots. The vector lobby
is seated with the vector identities, so its `bots` keys are the real lobby's seats."""

from __future__ import annotations

import json
from typing import Any

import trio
from mesh_helpers import FAST, table_of_four

from buraco_p2p import codec
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.appmessages import (
    MAX_CHAT,
    MAX_RULE_OVERRIDES,
    MAX_RULE_TEXT,
    bots_announced,
    bots_claimed,
    chat_message,
    chat_said,
    is_ready,
    rules_announced,
    tagged,
)
from buraco_p2p.net.table.table import Member, Roster
from protocol.gen import net as vectors
from protocol.gen.files import VECTOR_DIR

MALFORMED_FROM_THE_HOST: list[Any] = [
    ["ready", 1],
    ["ready", "again"],
    ["rules"],
    ["rules", "classic"],
    ["rules", "classic", [], "extra"],
    ["rules", 7, []],
    ["rules", "classic", "target_score=2500"],
    ["rules", "classic", [3000]],
    ["rules", "classic", ["k=v"] * (MAX_RULE_OVERRIDES + 1)],
    ["rules", "classic", ["k=" + "v" * (MAX_RULE_TEXT - 1)]],
]


async def test_malformed_lobby_messages_are_dropped_and_never_reach_the_match() -> None:
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        host, bia, caio = meshes[0], meshes[1], meshes[2]
        lines: list[str] = []
        lobby = Lobby(bia, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        for message in MALFORMED_FROM_THE_HOST:
            await host.broadcast(message)
        await caio.broadcast(["rules", "italian", []])  # well formed, but not the host's
        await host.broadcast(["rules", "classic", ["k=" + "v" * (MAX_RULE_TEXT - 2)]])
        await caio.broadcast(["ready"])
        # Each link keeps its order: once these show, everything sent before them was handled.
        await host.broadcast(["chat", "after the host's"])
        await caio.broadcast(["chat", "after caio's"])
        with trio.fail_after(10):
            while not any("after the host's" in x for x in lines) or not any(
                "after caio's" in x for x in lines
            ):
                await trio.sleep(0.01)
        chosen = [x for x in lines if "chose the rules" in x]
        assert len(chosen) == 1 and "classic with k=vvv" in chosen[0], lines
        assert lobby.ready == {caio.me.raw}, "only caio's well-formed ready counts"
        assert lobby.backlog == [], lobby.backlog
        nursery.cancel_scope.cancel()


def _vector_payloads(key: str) -> list[tuple[str, str, Any]]:
    """(name, sender, value) of mesh.json's `key` list, each decoded from its bytes."""
    cases = json.loads((VECTOR_DIR / "mesh.json").read_text(encoding="utf-8"))[key]
    out = []
    for case in cases:
        value = codec.unpack(bytes.fromhex(case["msgpack"]), canonical=True)
        assert value == vectors.untyped(case["value"]), case["name"]
        out.append((case["name"], case.get("sender", ""), value))
    return out


def _tag(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else None


def _vector_roster() -> Roster:
    """mesh.json's `lobby_roster`, as a receiver would hold it (addresses play no part)."""
    spec = json.loads((VECTOR_DIR / "mesh.json").read_text(encoding="utf-8"))["lobby_roster"]
    ids = vectors.lobby_identities()
    assert [i.public.raw.hex() for i in ids] == spec["keys"], "the identities are the vector's"
    members = tuple(Member(n, i.public, i.nickname, ()) for n, i in enumerate(ids))
    return Roster(b"\x00" * 16, 1, members, spec["seats"])


def test_the_vector_lobby_payloads_are_well_formed_and_the_dropped_ones_are_not() -> None:
    roster = _vector_roster()
    host, caio = roster.host.key, roster.members[2].key
    taken = _vector_payloads("lobby_payloads")
    assert {value[0] for _, _, value in taken} == {"ready", "rules", "chat", "bots"}
    for name, _, value in taken:
        if value[0] == "rules":
            assert rules_announced(value) == (value[1], tuple(value[2])), name
        if value[0] == "bots":
            assert bots_announced(value, host, roster) == frozenset(value[1]), name
            assert bots_announced(value, caio, roster) is None, "only the host's counts"
        if value[0] == "ready":
            assert is_ready(value), name
        if value[0] == "chat":
            assert chat_said(value) == value[1], name
    for name, _, value in _vector_payloads("dropped_payloads"):
        assert rules_announced(value) is None and not is_ready(value), name
        assert bots_announced(value, host, roster) is None, name
        assert chat_said(value) is None, name
    for name, _, value in _vector_payloads("deferred_payloads"):
        assert bots_claimed(value, host, roster) == frozenset(value[1]), name
        assert bots_announced(value, host, roster) is None, "not marked until seated"


def test_a_message_is_of_a_kind_by_its_first_element_whether_or_not_it_is_well_formed() -> None:
    assert tagged(["ready", 1], "ready") and not is_ready(["ready", 1])
    assert tagged(["chat", 5], "chat") and chat_said(["chat", 5]) is None
    assert not tagged([], "chat") and not tagged({"chat": "hi"}, "chat")
    assert not tagged("chat", "chat") and not tagged([b"chat"], "chat")


def test_our_chat_is_cut_to_the_bound_and_reads_back_as_chat() -> None:
    long = "x" * (MAX_CHAT + 7)
    assert chat_message(long) == ["chat", "x" * MAX_CHAT]
    assert chat_said(codec.unpack(codec.pack(chat_message("oi")))) == "oi"


async def test_a_lobby_acts_on_the_vector_payloads_and_drops_the_rest() -> None:
    seated = vectors.lobby_identities()  # so the vectors' `bots` keys are this lobby's seats
    async with table_of_four(identities=seated) as meshes, trio.open_nursery() as nursery:
        host, bia, caio = meshes[0], meshes[1], meshes[2]
        lines: list[str] = []
        lobby = Lobby(bia, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        for _, _, value in _vector_payloads("dropped_payloads"):
            await host.broadcast(value)
            await caio.broadcast(value)
        taken = _vector_payloads("lobby_payloads")
        for _, sender, value in taken:
            await (host if sender == "the host" else caio).broadcast(value)
        await host.broadcast(["chat", "end of the host's"])
        await caio.broadcast(["chat", "end of caio's"])
        with trio.fail_after(10):
            while not all(any(end in x for x in lines) for end in ("host's", "caio's")):
                await trio.sleep(0.01)
        rules = [value for _, _, value in taken if value[0] == "rules"]
        assert len([x for x in lines if "chose the rules" in x]) == len(rules), lines
        assert lobby.ready == {caio.me.raw}
        # The host's last `bots` is what is marked; each dropped one named its sender.
        last_bots = [value for _, _, value in taken if value[0] == "bots"][-1]
        assert lobby.bots == frozenset(last_bots[1]) and lobby.bots, lobby.bots
        dropped_bots = [v for _, _, v in _vector_payloads("dropped_payloads") if _tag(v) == "bots"]
        # Named as dropped: every one of caio's, and every one of the host's.
        roster = bia.roster
        assert roster is not None
        assert all(bots_claimed(v, host.me, roster) is None for v in dropped_bots)
        refused = [x for x in lines if x.startswith("* dropped a bots message from ")]
        assert len(refused) == 2 * len(dropped_bots), lines
        assert sum("Caio" in x for x in refused) == len(dropped_bots), refused
        # The host's well-formed `bots` naming a key with no seat waits for a roster that never
        # seats it: the marks stay as the last one left them, and nothing is named dropped.
        for _, _, value in _vector_payloads("deferred_payloads"):
            await host.broadcast(value)
        await host.broadcast(["chat", "after the deferred"])
        with trio.fail_after(10):
            while not any("after the deferred" in x for x in lines):
                await trio.sleep(0.01)
        assert lobby.bots == frozenset(last_bots[1]), lobby.bots
        assert len([x for x in lines if x.startswith("* dropped a bots")]) == len(refused)
        # Nothing of these is kept for the match: only the match's own tags are (2.10).
        kept = [m for _, m in lobby.backlog]
        assert kept == [], kept
        chats = [x for x in lines if x.startswith("<")]
        assert len(chats) == 4, chats  # the vector's chat line, the two ends, the marker
        nursery.cancel_scope.cancel()


async def test_only_the_hosts_well_formed_bots_marks_seats_and_the_lobby_goes_on() -> None:
    async with table_of_four() as meshes, trio.open_nursery() as nursery:
        host, bia, caio, dan = meshes
        lines: list[str] = []
        lobby = Lobby(bia, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        await host.broadcast(["bots", [dan.me.raw]])
        await caio.broadcast(["bots", [dan.me.raw, caio.me.raw]])  # well formed, not the host's
        await host.broadcast(["bots", [dan.me.raw, dan.me.raw]])  # malformed: marks nothing
        await host.broadcast(["bots", [host.me.raw]])  # the host is no bot of its own
        await host.broadcast(["chat", "after the host's"])
        await caio.broadcast(["chat", "after caio's"])
        with trio.fail_after(10):
            while not all(any(end in x for x in lines) for end in ("host's", "caio's")):
                await trio.sleep(0.01)
        assert lobby.bots == {dan.me.raw}, "the host's first, well-formed one stands"
        refused = [x for x in lines if x.startswith("* dropped a bots message from ")]
        assert len(refused) == 3, lines
        assert sum("caio" in x for x in refused) == 1 and sum("ana" in x for x in refused) == 2
        marked = [line for line in lobby.seats_text().splitlines() if "[bot]" in line]
        assert len(marked) == 1 and "seat 4:" in marked[0], lobby.seats_text()
        assert lobby.backlog == [], "no bots message is kept for the match"
        nursery.cancel_scope.cancel()


async def test_a_hosts_bots_naming_a_seat_not_yet_in_our_roster_waits_for_that_roster() -> None:
    """The host's word about a seat we have not seen filled (its roster to us can come after
    its `bots`) is neither dropped nor marked: it is marked once our roster seats that key."""
    ana, bia, duda = (Identity.generate(n) for n in ("ana", "bia", "duda"))
    async with (
        host_table(ana, config=FAST, seats=3) as host,
        join_table(bia, host.invite, config=FAST) as b,
        trio.open_nursery() as nursery,
    ):
        with trio.fail_after(10):
            while not b.is_up(host.me):
                await trio.sleep(0.01)
        lines: list[str] = []
        lobby = Lobby(b, lines.append)
        _send, recv = trio.open_memory_channel[str](8)
        nursery.start_soon(lobby.run, recv)
        await host.broadcast(["bots", [duda.public.raw]])  # duda holds no seat yet
        await host.broadcast(["chat", "after the bots"])
        with trio.fail_after(10):
            while not any("after the bots" in x for x in lines):
                await trio.sleep(0.01)
        assert lobby.bots == frozenset() and not any("dropped" in x for x in lines), lines
        async with join_table(duda, host.invite, config=FAST):
            with trio.fail_after(10):
                while lobby.bots != {duda.public.raw}:
                    await trio.sleep(0.01)
            marked = [x for x in lobby.seats_text().splitlines() if "[bot]" in x]
            assert len(marked) == 1 and "duda" in marked[0], lobby.seats_text()
            nursery.cancel_scope.cancel()
