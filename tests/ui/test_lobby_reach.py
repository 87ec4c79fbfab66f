"""The full-screen lobby's `--internet`/`--stun` parts without a network: a reply code reaches
the host's answer from its `v` input, from a chat line (as the line lobby routes a `BRR-`
line) and from a paste, and nothing else does; the joiner's reply code is shown whole with
why; the host's addresses list the outside ones first, each with how it was learnt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Endpoint, Invite
from buraco_p2p.rules import PRESETS
from buraco_p2p.ui.lobby_model import LobbyModel, Typing
from buraco_p2p.ui.lobby_reach import address_words, joiner_say
from buraco_p2p.ui.lobby_screen import lobby_rows

CODE = "BRR-AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-FFFFF-GGGGG-HHHHH-IIIII-JJJJJ-KKKKK-LLLLL-MMMMM"


def _text(m: LobbyModel) -> str:
    return "\n".join("".join(f[1] for f in row) for row in lobby_rows(m, 80, 24, 0.0))


def _host() -> tuple[LobbyModel, list[str]]:
    m = LobbyModel("ana", "aaaa-bbbb", rules=PRESETS["classic"])
    m.reaching = True
    answered: list[str] = []

    def reply(text: str) -> Callable[[], Awaitable[None]]:
        answered.append(text)

        async def run() -> None:
            return None

        return run

    m.on_reply = reply
    return m, answered


def _type(m: LobbyModel, text: str) -> object:
    got: object = None
    for ch in text:
        got = m.key(ch)
    return got


def test_the_host_answers_a_reply_code_typed_at_v_and_says_what_the_input_is_for() -> None:
    m, answered = _host()
    assert "v reply code" in _text(m).splitlines()[-1]
    assert m.key("v") is None and m.typing is Typing.REPLY
    screen = _text(m)
    assert "reply code (Enter sends, Esc cancels)>" in screen
    assert "lets them through your NAT" in screen
    _type(m, CODE)
    assert callable(m.key("enter")) and answered == [CODE]
    assert m.typing is None


def test_a_reply_code_in_chat_or_pasted_is_answered_and_chat_or_a_stray_paste_is_not() -> None:
    m, answered = _host()
    m.key("c")
    _type(m, CODE.lower())
    m.key("enter")
    assert answered == [CODE.lower()]  # as the line lobby routes it: never sent as chat
    assert callable(m.paste(f"{CODE}\n")) and answered[-1] == CODE
    assert m.paste("yyyy") is None and len(answered) == 2  # a paste is never keys (no "y")
    assert "pasted text ignored" in m.notice
    m.key("v")
    assert m.paste("BRR-AB\nCDE") is None and m.text == "BRR-ABCDE"  # line breaks are not Enter
    m.key("escape")
    assert m.typing is None and len(answered) == 2


def test_a_joiner_cannot_send_reply_codes_and_shows_its_own_whole_with_why() -> None:
    m = LobbyModel("bia", "cccc-dddd", rules=None)
    m.reaching = True
    assert m.key("v") is None and m.typing is None
    assert m.paste(CODE) is None and "for the host" in m.notice
    say = joiner_say(m)
    say("* if the host cannot be reached directly, give the host this reply code to paste:")
    say(CODE)
    assert m.reply_code == CODE
    lines = _text(m).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(" BRR-"))
    shown = "".join(line.strip() for line in lines[start : start + 2])
    assert shown == CODE and all(len(line) <= 80 for line in lines)
    assert "Reply code for the host to paste" in lines[start - 1]
    assert any(line.startswith(" why: the host is behind a NAT") for line in lines)


def test_the_host_addresses_list_the_outside_ones_first_with_how_each_was_learnt() -> None:
    eps = (Endpoint.parse("10.0.1.2", 4480), Endpoint.parse("198.51.100.11", 4480),
           Endpoint.parse("198.51.100.12", 4481))  # fmt: skip
    kinds = (CandidateKind.HOST, CandidateKind.MAPPED, CandidateKind.REFLEXIVE)
    invite = Invite(b"t" * 16, b"s" * 16, b"k" * 32, eps, kinds=tuple(int(k) for k in kinds))
    assert address_words(invite) == [
        ("198.51.100.11:4480", "mapped"), ("198.51.100.12:4481", "public (STUN)"),
        ("10.0.1.2:4480", "this machine"),
    ]  # fmt: skip


def test_a_long_mapping_state_wraps_under_its_label_and_seat_list_headings_are_left_out() -> None:
    m, _ = _host()
    m.mapping = ("none (PCP/NAT-PMP: the router at 10.0.1.1 did not answer: nothing listens on "
                 "its UDP port 5351; UPnP: no UPnP device answered)")  # fmt: skip
    lines = _text(m).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(" Port mapping none"))
    assert lines[start + 1].startswith(" " * 14) and lines[start + 1].strip()
    assert all(len(line) <= 80 for line in lines)
    m.out("* seated (1/2):\n  seat 1: ana (you)  aaaa-bbbb\n  seat 2: (empty)")
    m.out("* bia connected (direct (punched))")
    assert m.log == ["* bia connected (direct (punched))"]


def test_a_crowded_lobby_keeps_the_reach_rows_to_one_each_before_losing_a_seat_row() -> None:
    m, _ = _host()
    m.invite = "BRC-" + "-".join(["ABCDE"] * 90)  # a tall invite: seven rows at 80 columns
    m.addresses = [(f"198.51.100.{k}:4480", "public (STUN)") for k in range(10)]
    m.mapping = "none (" + "a long reason " * 20 + ")"
    roomy = _text(m).splitlines()
    # the mapping wraps under its label (2 more rows), the addresses (1 more)
    assert sum(line.startswith(" " * 11) and bool(line.strip()) for line in roomy) == 3
    tight = "\n".join("".join(f[1] for f in row) for row in lobby_rows(m, 80, 16, 0.0))
    lines = tight.splitlines()
    assert len(lines) == 16 and any(line.startswith(" Rules ") for line in lines), tight
    assert sum(line.startswith(" Port mapping ") for line in lines) == 1
    assert not any(line.startswith(" " * 11) and line.strip() for line in lines), tight
