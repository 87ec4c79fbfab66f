"""Nicknames: the PRECIS Nickname profile, no blank or fingerprint-shaped names, and no
look-alike of a seated player's name."""

from __future__ import annotations

import pytest
import trio
from mesh_helpers import FAST

from buraco_p2p.net.channel.identity import (
    Identity,
    confusable_nicknames,
    nickname_skeleton,
    validate_nickname,
)
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import JoinRequest
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.table.table import JoinRefused, Member, Roster


@pytest.mark.parametrize(
    "name",
    [
        "\u2800",  # Braille blank
        "\u3164",  # Hangul filler
        "ana\u2800",
        "\uffa0bia",  # half-width Hangul filler
        "\u115f",
        "a\u200bb",  # zero-width space
        "k7dq-m3xa",  # a fingerprint
        "qwjv-xhdm-4biz-qecj-nbq3",
        "bia k7dq-m3xa",
        "abcd-efgh-ijkl",
        "ana (k7dq)",  # the lobby's "nick (fp)" form
        "<ana>",
    ],
)
def test_blank_looking_and_fingerprint_shaped_nicknames_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        validate_nickname(name)


@pytest.mark.parametrize(
    ("given", "enforced"),
    [
        ("  Ana   Paula ", "Ana Paula"),  # RFC 8266: spaces trimmed and collapsed
        ("\uff41\uff4e\uff41", "ana"),  # full-width forms: NFKC
        ("Jose\u0301", "Jos\u00e9"),
        ("lucy", "lucy"),  # four base32 letters are a name, not a fingerprint
        ("Caio 2", "Caio 2"),
        ("luiz-vita", "luiz-vita"),
        ("host-lookalike", "host-lookalike"),
        ("maria luiza", "maria luiza"),
    ],
)
def test_nicknames_are_enforced_by_the_precis_nickname_profile(given: str, enforced: str) -> None:
    assert validate_nickname(given) == enforced
    assert validate_nickname(enforced) == enforced  # idempotent, as the handshake requires


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("alice", "\u0430lice"),  # Cyrillic a
        ("Alice", "alice"),
        ("paulo", "\u0440\u0430ul\u043e"),
        ("bob", "b0b"),
        ("ana", "\U0001d41ana"),  # mathematical bold a
        ("Ana Paula", "anapaula"),
    ],
)
def test_look_alike_nicknames_are_confusable(a: str, b: str) -> None:
    assert confusable_nicknames(a, b)
    assert nickname_skeleton(a) == nickname_skeleton(b)


@pytest.mark.parametrize(("a", "b"), [("ana", "bia"), ("caio", "duda"), ("lucas", "lucia")])
def test_different_nicknames_are_not_confusable(a: str, b: str) -> None:
    assert not confusable_nicknames(a, b)


async def test_a_look_alike_of_a_seated_nickname_is_refused_without_asking() -> None:
    asked: list[JoinRequest] = []

    async def approve(request: JoinRequest) -> bool:
        asked.append(request)
        return True

    async with host_table(Identity.generate("ana"), config=FAST, approve=approve) as host:
        async with join_table(Identity.generate("alice"), host.invite, config=FAST):
            with pytest.raises(JoinRefused, match="looks like 'alice'"):
                async with join_table(Identity.generate("\u0430lice"), host.invite, config=FAST):
                    raise AssertionError("a look-alike was seated")  # pragma: no cover
        assert [r.nickname for r in asked] == ["alice"]
        assert host.roster is not None
        assert [m.nickname for m in host.roster.members] == ["ana", "alice"]


async def test_the_lobby_shows_the_short_fingerprint_beside_look_alike_names() -> None:
    ana, alice, twin = (Identity.generate(n) for n in ("ana", "alice", "Alice"))
    saved = Roster(
        bytes(16),
        3,
        (
            Member(0, ana.public, "ana", ()),
            Member(1, alice.public, "alice", ()),
            Member(2, twin.public, "Alice", ()),
        ),
    )
    async with host_table(ana, config=FAST, table_id=bytes(16), roster=saved) as host:
        lobby = Lobby(host, lambda text: None)
        assert lobby.name(alice.public) == f"alice ({alice.public.short()})"
        assert lobby.name(twin.public) == f"Alice ({twin.public.short()})"
        assert lobby.name(ana.public) == "ana"
    await trio.lowlevel.checkpoint()
