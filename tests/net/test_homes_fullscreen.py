"""The full-screen client with `--internet` and `--stun`, in tmux at 80x24, in homes of the
namespace lab (natlab.py): a host whose router maps its port by PCP (the lab's own responder)
shows the mapping and the mapped address in its lobby, and its joiner's seat list says the link
is "mapped"; a host without a mapping is reached through a reply code that the full-screen
joiner shows (with why) and the host pastes at its `v` prompt (bracketed, as a terminal
pastes); a host resumed with `--internet` asks its router again and writes the invite with the
mapping. Skipped with the reason where namespaces, nftables or tmux are unavailable."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from natlab import Home, Lab, portmap_responder, stun_lab, unavailable

from tests.ui.test_tmux import TMUX, Pane

REASON = unavailable() or (None if TMUX is not None else "tmux is not installed")
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
WAIT = 90.0


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    with stun_lab() as made:
        yield made


@pytest.fixture
def panes() -> Iterator[tuple[Pane, Pane]]:
    made = Pane(), Pane()
    try:
        yield made
    finally:
        for p in made:
            p.close()


def _run(pane: Pane, home: Home, who: Path, *args: str) -> None:
    """`buraco-p2p ARGS` in the full-screen client inside `home`, as `who` (its own identity
    and data directory)."""
    where = f"--config-dir {who}/id --data-dir {who}/data"
    pane.type(f"ip netns exec {home.namespace} {sys.executable} -m buraco_p2p "
              f"{' '.join(args)} {where}")  # fmt: skip
    pane.send("Enter")


def _stun(lab: Lab) -> str:
    return " ".join(f"--stun {ep.host}:{ep.port}" for ep in lab.stun_servers())


def _invite(who: Path) -> str:
    files = list((who / "data" / "invites").glob("*.txt"))
    assert len(files) == 1, files
    return files[0].read_text().strip()


def _leave(pane: Pane) -> None:
    pane.type("q")
    pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt after quitting", WAIT)


def test_a_host_whose_router_maps_its_port_shows_it_and_its_joiner_is_linked_mapped(
    lab: Lab, panes: tuple[Pane, Pane], tmp_path: Path
) -> None:
    host_home, joiner_home = lab.add_home(), lab.add_home()
    stop = threading.Event()
    responder = portmap_responder(host_home, stop)
    host, joiner = panes
    try:
        _run(host, host_home, tmp_path / "ana", "host", "--nick", "ana", "--players", "2",
             "--port", "4480", "--auto-approve", "--internet", _stun(lab))  # fmt: skip
        public = f"{host_home.public_ip}:4480"
        screen = host.wait_for(lambda s: "Port mapping mapped by PCP" in s and "Seats" in s,
                               "the mapping in the host's lobby", WAIT)  # fmt: skip
        assert f"Port mapping mapped by PCP: {public}" in screen, screen
        assert f"Addresses {public} mapped" in screen, screen
        assert "v reply code" in screen.splitlines()[-1], screen
        _run(joiner, joiner_home, tmp_path / "bia", "join", _invite(tmp_path / "ana"),
             "--nick", "bia", _stun(lab))  # fmt: skip
        seen = joiner.wait_for(lambda s: re.search(r"1 ana \(host\).*mapped", s) is not None,
                               "the joiner's link to the host, mapped", WAIT)  # fmt: skip
        assert "Reply code" not in seen, seen  # the host is reachable without one
        host.wait_for(lambda s: "2 bia" in s, "the joiner in the host's seats", WAIT)
        _leave(joiner)
        _leave(host)
    finally:
        stop.set()
        responder.join(10)


def _code_on(screen: str) -> str:
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(" BRR-"))
    code = ""
    for line in lines[start:]:
        if not line.strip() or line.startswith(" why"):
            break
        code += line.strip()
    return code


def test_a_reply_code_shown_by_a_full_screen_joiner_and_pasted_by_the_host_makes_a_link(
    lab: Lab, panes: tuple[Pane, Pane], tmp_path: Path
) -> None:
    host_home, joiner_home = lab.add_home(), lab.add_home()
    host, joiner = panes
    _run(host, host_home, tmp_path / "ana", "host", "--nick", "ana", "--players", "2",
         "--port", "4490", "--auto-approve", _stun(lab))  # fmt: skip
    public = f"{host_home.public_ip}:4490"
    host.wait_for(lambda s: f"{public} public (STUN)" in s and "Seats" in s,
                  "the public address in the host's lobby", WAIT)  # fmt: skip
    _run(joiner, joiner_home, tmp_path / "bia", "join", _invite(tmp_path / "ana"),
         "--nick", "bia", _stun(lab))  # fmt: skip
    screen = joiner.wait_for(lambda s: " why:" in s, "the joiner's reply code and why", WAIT)
    assert "Reply code for the host to paste" in screen, screen
    code = _code_on(screen)
    assert code.startswith("BRR-") and len(code) > 20, screen
    host.type("v")
    host.wait_for(lambda s: "reply code (Enter sends" in s and "lets them through" in s,
                  "the reply code input, with what it is for", WAIT)  # fmt: skip
    # pasted as a terminal pastes (bracketed), its line breaks kept: they are not Enter
    host.tmux("set-buffer", "-b", "code", code[:20] + "\n" + code[20:])
    host.tmux("paste-buffer", "-p", "-b", "code", "-t", "t")
    host.wait_for(lambda s: code[-10:] in s, "the pasted code in the input line", WAIT)
    host.send("Enter")
    host.wait_for(lambda s: "2 bia" in s, "the joiner seated through the reply code", WAIT)
    joiner.wait_for(lambda s: re.search(r"1 ana \(host\).*punched", s) is not None,
                    "the joiner's link to the host, punched", WAIT)  # fmt: skip
    _leave(joiner)
    _leave(host)


def test_a_host_resumed_on_the_full_screen_asks_its_router_again(
    lab: Lab, panes: tuple[Pane, Pane], tmp_path: Path
) -> None:
    from buraco_p2p.net.reach.candidates import CandidateKind
    from buraco_p2p.net.reach.invite import Endpoint, Invite

    home = lab.add_home()
    stop = threading.Event()
    asked: list[bytes] = []
    responder = portmap_responder(home, stop, log=asked)
    pane = panes[0]
    ana = tmp_path / "ana"
    try:
        _run(pane, home, ana, "host", "--nick", "ana", "--players", "2", "--bots", "1",
             "--port", "4500", "--internet")  # fmt: skip
        pane.wait_for(lambda s: "Port mapping mapped by PCP" in s and "Seats 2/2" in s,
                      "the mapping and the bot seated", WAIT)  # fmt: skip
        pane.type("r")
        pane.wait_for(lambda s: "lobby" not in s.splitlines()[0], "the table screen", WAIT)
        pane.type("q")
        pane.wait_for(lambda s: "Quit the match?" in s, "the quit question", WAIT)
        pane.type("y")
        pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", WAIT)
        (table,) = [p.name for p in (ana / "data" / "tables").iterdir()]
        invite_file = ana / "data" / "invites" / f"{table}.txt"
        invite_file.unlink()
        before = len(asked)
        _run(pane, home, ana, "resume", table, "--internet")
        pane.wait_for(lambda s: "resumed" in s.splitlines()[0], "the resumed table", WAIT)
        pane.type("C")  # the whole feed
        feed = pane.wait_for(lambda s: "port mapped by PCP" in s and "joins again" in s,
                             "the new mapping in the feed", WAIT)  # fmt: skip
        assert f"port mapped by PCP: {home.public_ip}:4500" in feed, feed
        assert len(asked) > before  # the router was asked again
        invite = Invite.from_text(invite_file.read_text())
        kinds = dict(zip(invite.addresses, invite.kinds, strict=True))
        assert kinds.get(Endpoint.parse(home.public_ip, 4500)) == CandidateKind.MAPPED, kinds
        pane.send("Escape")
        pane.type("q")
        pane.wait_for(lambda s: "Quit the match?" in s, "the quit question", WAIT)
        pane.type("y")
        pane.wait_for(lambda s: s.rstrip().endswith("$"), "the shell prompt", WAIT)
    finally:
        stop.set()
        responder.join(10)


def test_a_router_that_refuses_the_mapping_is_named_with_why_in_the_lobby(
    lab: Lab, panes: tuple[Pane, Pane], tmp_path: Path
) -> None:
    import struct

    from natlab import router_responder

    home = lab.add_home()
    stop = threading.Event()

    def refuse(data: bytes) -> bytes | None:  # every PCP MAP: NO_RESOURCES (8)
        if data[:1] == b"\x02" and len(data) >= 60:
            return struct.pack(">BBBBII", 2, 0x81, 0, 8, 0, 1) + bytes(12) + data[24:60]
        return None

    responder = router_responder(home, stop, refuse, "the refusing PCP responder")
    pane = panes[0]
    try:
        _run(pane, home, tmp_path / "ana", "host", "--nick", "ana", "--players", "2",
             "--internet")  # fmt: skip
        screen = pane.wait_for(lambda s: "NO_RESOURCES (8)" in s and "Seats" in s,
                               "the refusal in the lobby", WAIT)  # fmt: skip
        lines = screen.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(" Port mapping "))
        row = " ".join(line.strip() for line in lines[at : at + 3])
        assert "PCP/NAT-PMP: the router refused the PCP mapping: NO_RESOURCES (8)" in row, row
        _leave(pane)
    finally:
        stop.set()
        responder.join(10)
