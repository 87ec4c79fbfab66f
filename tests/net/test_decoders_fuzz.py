"""Every decoder of docs/protocol.md section 2, fed hostile values: a typed refusal, never a crash.

Each decoder takes a value a peer (or a file on disk, or a pasted code) chose. Hypothesis draws
values of the codec's whole value model (2.1: nil, booleans, integers, str, bin, arrays, maps
keyed by str or integer), mostly shaped like the decoder's own records (its tag first, then
anything, arrays and maps in every field where a str or an integer belongs), and each call
must either return or raise the decoder's own error, a `NetError` (or the genesis check's
`GenesisError`). A `TypeError` (an unhashable array used as a key), an `IndexError`, a
`KeyError` or anything else is a crash a peer could cause, and fails the test with the value.
The application payloads (2.10) go through the lobby's own reading, which refuses nothing
aloud: it drops what it cannot take, and must never raise.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.reliable import ChannelState, parse_record
from buraco_p2p.net.mesh.meshconfig import MeshState
from buraco_p2p.net.mesh.moved import parse_moved
from buraco_p2p.net.mesh.punching import parse_punch_record
from buraco_p2p.net.mesh.relay import parse_relay
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.net.reach.rejoin import RejoinCode
from buraco_p2p.net.reach.reply import ReplyCode
from buraco_p2p.net.reach.shortcode import ShortCode, parse_invite_message
from buraco_p2p.net.table.appmessages import (
    bots_announced,
    bots_claimed,
    chat_said,
    is_ready,
    rules_announced,
    tag_of,
    tagged,
)
from buraco_p2p.net.table.table import Member, Roster, parse_greeting, parse_welcome
from buraco_p2p.play.genesis import GenesisError, check_terms

HOST = Identity.generate("ana")
ME = Identity.generate("bia")
TABLE = secrets.token_bytes(16)
ROSTER = Roster(TABLE, 1, (Member(0, HOST.public, "ana", ()), Member(1, ME.public, "bia", ())),
                seats=4)  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.sampled_from([0, 1, 2, 4, 32, 64, 65535, 65536, 2**32])
    | st.text(max_size=12)
    | st.sampled_from(["d", "a", "r", "ro", "rd", "rc", "seen", "ping", "pong", "punch", "moved",
                       "join", "mesh", "welcome", "refused", "roster", "leave", "invite", "chat",
                       "ready", "rules", "bots", "addrs", "kinds", "seat", "key", "nick",
                       "table", "version", "seats", "members", "left", "reason", "10.0.0.1",
                       "::1", "fe80::1%eth0"])
    | st.binary(max_size=40)
    | st.sampled_from([b"\x00" * 16, b"\x01" * 32, HOST.public.raw, TABLE, b"\x00" * 64])
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(scalars.filter(lambda k: type(k) in (str, int)), children, max_size=4)
    ),
    max_leaves=20,
)


def shaped(tag: str) -> st.SearchStrategy[Any]:
    """`[tag, ...]`, the rest anything: the records a decoder of `tag` reads far into."""
    return st.builds(lambda rest: [tag, *rest], st.lists(values, max_size=5))


def hostile(*tags: str) -> st.SearchStrategy[Any]:
    near = st.sampled_from(tags).flatmap(shaped) if tags else st.nothing()
    led = st.builds(lambda head, rest: [head, *rest], values, st.lists(values, max_size=3))
    return near | led | values


class _LinkName:
    """What `parse_invite_message` reads of the link: its label and the host's key."""

    label = "the host"
    peer = HOST.public


SHORT = ShortCode.for_invite(Invite(TABLE, secrets.token_bytes(16), HOST.public.raw,
                                    (Endpoint.parse("198.51.100.7", 4470),)))  # fmt: skip

# (name, the decoder, the values to feed it, what it may raise)
Refusals = tuple[type[BaseException], ...]
Decoder = tuple[str, Callable[[Any], object], st.SearchStrategy[Any], Refusals]
DECODERS: list[Decoder] = [
    ("delivery record (2.8)", lambda v: parse_record(v, "peer"), hostile("d", "a", "r"),
     (NetError,)),
    ("relay record (2.7)", lambda v: parse_relay(v, "peer"), hostile("ro", "rd", "rc"),
     (NetError,)),
    ("punch record (2.11)", lambda v: parse_punch_record(v, "peer"),
     hostile("seen", "ping", "pong", "punch"), (NetError,)),
    ("moved record (2.15)", lambda v: parse_moved(v, HOST.public, TABLE, "peer"),
     hostile("moved"), (NetError,)),
    ("greeting (2.6)", lambda v: parse_greeting(v, "peer"), hostile("join", "mesh"),
     (NetError,)),
    ("welcome or refused (2.6)", lambda v: parse_welcome(v, "host", ME.public, TABLE),
     hostile("welcome", "refused"), (NetError,)),
    ("roster (2.6)", lambda v: Roster.from_wire(v, "host"),
     st.builds(lambda fields: dict(zip(("table", "version", "seats", "members", "left"), fields,
                                      strict=False)), st.lists(values, min_size=5, max_size=5))
     | values, (NetError,)),
    ("short-code invite (2.13)",
     lambda v: parse_invite_message(v, SHORT, _LinkName()),  # type: ignore[arg-type]
     hostile("invite"), (NetError,)),
    ("saved delivery state", ChannelState.from_wire, values, (NetError,)),
    ("saved mesh state", MeshState.from_wire, values, (NetError,)),
    ("genesis terms (2.10)", lambda v: check_terms(v, ROSTER.members, ME.public),
     st.builds(lambda fields: dict(zip(("players", "rules", "digest", "timeout"), fields,
                                      strict=False)), st.lists(values, min_size=4, max_size=4))
     | values, (GenesisError,)),
]
assert SHORT is not None


def _refused_or_taken(decode: Callable[[Any], object], value: Any,
                      refusals: tuple[type[BaseException], ...]) -> None:  # fmt: skip
    codec.pack(value)  # every value drawn is one a peer can send
    with contextlib.suppress(*refusals):
        decode(value)


CASES = pytest.mark.parametrize(("name", "decode", "inputs", "refusals"), DECODERS,
                                ids=[d[0] for d in DECODERS])  # fmt: skip
QUICK = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck),
                 database=None)  # fmt: skip
SOAK = settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck),
                database=None)  # fmt: skip


@CASES
@QUICK
@given(data=st.data())
def test_a_decoder_refuses_any_value_with_its_own_error(
    name: str, decode: Callable[[Any], object], inputs: st.SearchStrategy[Any],
    refusals: tuple[type[BaseException], ...], data: st.DataObject,
) -> None:  # fmt: skip
    _refused_or_taken(decode, data.draw(inputs), refusals)


@pytest.mark.slow
@CASES
@SOAK
@given(data=st.data())
def test_soak_every_decoder_with_thousands_of_hostile_values(
    name: str, decode: Callable[[Any], object], inputs: st.SearchStrategy[Any],
    refusals: tuple[type[BaseException], ...], data: st.DataObject,
) -> None:  # fmt: skip
    _refused_or_taken(decode, data.draw(inputs), refusals)


APP_TAGS = ("chat", "ready", "rules", "bots", "terms", "gsig", "e", "sync", "at")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck),
          database=None)  # fmt: skip
@given(value=hostile(*APP_TAGS))
def test_the_application_payload_readers_never_raise(value: Any) -> None:
    tag = tag_of(value)
    assert tag is None or isinstance(tag, str)
    for kind in APP_TAGS:
        assert tagged(value, kind) == (tag == kind)
    said = chat_said(value)
    assert said is None or isinstance(said, str)
    assert is_ready(value) in (True, False)
    rules = rules_announced(value)
    assert rules is None or isinstance(rules[0], str)
    for sender in (HOST.public, ME.public):
        claimed = bots_claimed(value, sender, ROSTER)
        announced = bots_announced(value, sender, ROSTER)
        assert announced is None or (claimed is not None and announced <= claimed)


@pytest.mark.parametrize(
    ("name", "decode"),
    [
        ("invite code (2.5)", Invite.from_text),
        ("short code (2.13)", ShortCode.from_text),
        ("reply code (2.12)", lambda t: ReplyCode.from_text(t, b"\x00" * 16, TABLE)),
        ("re-join code (2.15)", lambda t: RejoinCode.from_text(t, b"\x00" * 32, TABLE)),
    ],
    ids=["invite", "short", "reply", "rejoin"],
)
@QUICK
@given(data=st.data())
def test_a_pasted_code_is_refused_with_its_own_error(
    name: str, decode: Callable[[str], object], data: st.DataObject
) -> None:
    prefix = st.sampled_from(["BRC-", "BRS-", "BRR-", "BRJ-", "brc-", ""])
    body = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ234567-=0189 \n", max_size=140)
    text = data.draw(st.builds(str.__add__, prefix, body) | st.text(max_size=60))
    with contextlib.suppress(NetError, ValueError):
        decode(text)


def test_the_payloads_that_once_crashed_a_lobby_have_no_tag() -> None:
    for payload in ([[0], 1], [{"a": 1}], [], [5], [None], [b"chat"]):
        assert tag_of(payload) is None
        assert not tagged(payload, "chat") and not is_ready(payload)
