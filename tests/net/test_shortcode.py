"""Short codes: the text form, and a joiner seated with one on loopback."""

from __future__ import annotations

import ipaddress
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from mesh_helpers import FAST

from buraco_p2p.net.channel.errors import HandshakeError, LinkClosed
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.channel.link import connect
from buraco_p2p.net.mesh.startup import host_table, join_table
from buraco_p2p.net.reach.invite import Endpoint, Invite, InviteError
from buraco_p2p.net.reach.shortcode import (
    ShortCode,
    ShortCodeError,
    fetch_invite,
    is_short_code,
)

SECRET = bytes(range(16))
CODE = ShortCode(Endpoint.parse("192.168.1.20", 4464), SECRET)


def test_ipv4_code_is_forty_characters_in_groups_of_five() -> None:
    text = CODE.to_text()
    groups = text.split("-")
    assert groups[0] == "BRS"
    assert [len(g) for g in groups[1:]] == [5] * 8
    assert ShortCode.from_text(text) == CODE
    assert ShortCode.from_text(text.lower().replace("-", " ")) == CODE
    assert is_short_code(" " + text.lower())
    assert not is_short_code("BRC-AAAAA")


def test_ipv6_code_round_trips() -> None:
    code = ShortCode(Endpoint.parse("2001:db8::7", 65535), SECRET)
    assert ShortCode.from_text(code.to_text()) == code
    assert len(code.to_text().replace("-", "")) == 3 + 60  # 37 bytes


def test_every_single_character_change_is_refused_in_one_line() -> None:
    text = CODE.to_text()
    refused = 0
    for i, ch in enumerate(text):
        if ch == "-" or i < 4:
            continue
        for other in "A7Q":
            if other == ch:
                continue
            typo = text[:i] + other + text[i + 1 :]
            try:
                decoded = ShortCode.from_text(typo)
            except ShortCodeError as exc:
                assert "\n" not in str(exc) and str(exc)
                refused += 1
            else:  # a 16-bit checksum lets about one in 65,536 changes through
                assert decoded != CODE
    assert refused >= 40 * 2 - 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("BRS-", "empty"),
        (CODE.to_text()[:-5], "missing"),
        (CODE.to_text() + "AAAAAAAA", "extra"),
        (CODE.to_text().replace("BRS", "BRC"), "starts with BRS"),
        (CODE.to_text()[:-1] + "1", "cannot appear"),
    ],
)
def test_damaged_codes_are_named(text: str, words: str) -> None:
    with pytest.raises(ShortCodeError, match=words):
        ShortCode.from_text(text)


def test_short_code_errors_are_invite_errors() -> None:
    assert issubclass(ShortCodeError, InviteError)


def test_for_invite_prefers_ipv4_and_keeps_the_secret() -> None:
    v6 = Endpoint.parse("2001:db8::1", 5000)
    v4 = Endpoint.parse("10.0.0.2", 5000)
    invite = Invite(bytes(16), SECRET, bytes(32), (v6, v4))
    assert ShortCode.for_invite(invite) == ShortCode(v4, SECRET)
    assert ShortCode.for_invite(Invite(bytes(16), SECRET, bytes(32), ())) is None


async def test_joiner_is_seated_with_a_short_code() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        code = ShortCode.for_invite(host.invite)
        assert code is not None
        assert code.endpoint.ip == ipaddress.ip_address("127.0.0.1")
        bia = Identity.generate("bia")
        with trio.fail_after(10):
            invite = await fetch_invite(ShortCode.from_text(code.to_text()), bia)
        assert invite == host.invite
        assert host.roster is not None and len(host.roster.members) == 1  # not seated by it
        async with join_table(bia, invite, config=FAST) as b:
            with trio.fail_after(10):
                await b.wait_all_up(2)
            assert b.roster is not None and b.roster.host.key == host.me
            await b.send(host.me, "seated by a short code")
            with trio.fail_after(5):
                assert await host.receive() == (b.me, "seated by a short code")


async def test_a_code_with_the_wrong_secret_gets_no_seat_and_no_invite() -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        good = ShortCode.for_invite(host.invite)
        assert good is not None
        wrong = ShortCode(good.endpoint, secrets.token_bytes(16))
        with trio.fail_after(10), pytest.raises(HandshakeError, match="room secret"):
            await fetch_invite(wrong, Identity.generate("eve"), timeout=5)
        assert host.roster is not None and len(host.roster.members) == 1
        with trio.fail_after(5):
            while not host.rejections:
                await trio.sleep(0.01)


async def test_a_seated_peer_does_not_answer_short_codes() -> None:
    async with (
        host_table(Identity.generate("ana"), config=FAST) as host,
        join_table(Identity.generate("bia"), host.invite, config=FAST) as b,
    ):
        with trio.fail_after(10):
            await b.wait_all_up(2)
        code = ShortCode(b.advertised[0], host.invite.room_secret)
        with trio.fail_after(10), pytest.raises(HandshakeError):
            await fetch_invite(code, Identity.generate("caio"), timeout=5)


async def test_a_short_code_link_cannot_join_or_speak_for_a_member() -> None:
    """The short link gets the invite and is closed; a join greeting on it seats nobody."""
    ana = Identity.generate("ana")
    async with host_table(ana, config=FAST) as host:
        ep = host.advertised[0]
        bia = Identity.generate("bia")
        link = await connect(
            ep.host, ep.port, bia, room_secret=host.room_secret, table_id=b"\x00",
            short=True, timeout=5,
        )  # fmt: skip
        async with link:
            assert link.peer == host.me
            first = await link.receive()
            assert first[0] == "invite"
            with trio.fail_after(5), pytest.raises(LinkClosed):
                await link.send(["join", {"addrs": []}])
                await link.receive()
        assert host.roster is not None and len(host.roster.members) == 1


# -- the real commands ---------------------------------------------------------------------

BASE = [sys.executable, "-m", "buraco_p2p"]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


# Children are started from the main thread, never from a trio worker thread: a worker made
# by a loop running inside a test network namespace stays in that namespace, and so would
# a child it started.


def _popen(args: list[str], who: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*BASE, *args, "--nick", who, "--config-dir", str(tmp_path / who)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )  # fmt: skip


async def _read_until(
    proc: subprocess.Popen[bytes], buf: list[bytes], needle: bytes, timeout: float
) -> str:
    """Read `proc`'s output lines into `buf` until `needle` appears (fails with what it said)."""
    assert proc.stdout is not None
    with trio.move_on_after(timeout):
        while needle not in b"".join(buf):
            line = await trio.to_thread.run_sync(proc.stdout.readline, abandon_on_cancel=True)
            if not line:
                raise AssertionError(f"process ended before {needle!r}: {b''.join(buf)!r}")
            buf.append(line)
        return b"".join(buf).decode()
    raise AssertionError(f"no {needle!r} within {timeout} s in: {b''.join(buf).decode()}")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=15)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


async def test_join_command_takes_the_short_code_the_host_prints(tmp_path: Path) -> None:
    host = _popen(["host", "--auto-approve", "--listen", "127.0.0.1"], "ana", tmp_path)
    procs = [host]
    try:
        assert host.stdin is not None
        host.stdin.close()  # the host keeps its table open without input
        host_buf: list[bytes] = []
        lines = (await _read_until(host, host_buf, b"input closed", 20)).splitlines()
        assert any(line.startswith("BRC-") for line in lines)
        short = next(line for line in lines if line.startswith("BRS-"))
        assert len(short.replace("-", "")) == 3 + 40
        joiner = _popen(["join", short.lower(), "--listen", "127.0.0.1"], "bia", tmp_path)
        procs.append(joiner)
        text = await _read_until(joiner, [], b"seated (2/4)", 30)
        assert "compare its fingerprint" in text
        await _read_until(host, host_buf, b"seated (2/4)", 10)
        assert joiner.stdin is not None
        joiner.stdin.write(b"/quit\n")
        joiner.stdin.flush()
        with trio.fail_after(15):
            assert await trio.to_thread.run_sync(joiner.wait) == 0
    finally:
        _stop(procs)


def _join_once(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BASE, "join", code, "--listen", "127.0.0.1", "--config-dir", str(tmp_path / "me")],
        capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, env=ENV,
    )  # fmt: skip


def _one_line_error(result: subprocess.CompletedProcess[str], needle: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr


def test_a_mistyped_short_code_is_one_line(tmp_path: Path) -> None:
    text = CODE.to_text()
    typo = text[:10] + ("A" if text[10] != "A" else "B") + text[11:]
    _one_line_error(_join_once(typo, tmp_path), "checksum")
    _one_line_error(_join_once(text[:-3], tmp_path), "missing")


async def test_a_short_code_with_another_secret_is_one_line_and_no_seat(tmp_path: Path) -> None:
    async with host_table(Identity.generate("ana"), config=FAST) as host:
        wrong = ShortCode(host.advertised[0], secrets.token_bytes(16)).to_text()
        joiner = _popen(["join", wrong, "--listen", "127.0.0.1"], "eve", tmp_path)
        try:
            with trio.fail_after(30):
                _, err = await trio.to_thread.run_sync(joiner.communicate, b"")
        finally:
            _stop([joiner])
        result = subprocess.CompletedProcess(joiner.args, joiner.returncode, "", err.decode())
        _one_line_error(result, "wrong room secret")
        assert host.roster is not None and len(host.roster.members) == 1


# -- the vector file, read as another client would --------------------------------------------

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def test_shortcode_vectors_replay() -> None:
    import hashlib
    import hmac
    import json

    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    from buraco_p2p import codec

    v = json.loads((VECTORS / "shortcode.json").read_text())
    invite = json.loads((VECTORS / "invite.json").read_text())["invite"]
    code = ShortCode.from_text(v["code"]["text"])
    assert code.to_bytes().hex() == v["code"]["binary"]
    assert code.room_secret.hex() == v["code"]["room_secret"] == invite["room_secret"]
    assert str(code.endpoint.ip) == v["code"]["ip"] == invite["addresses"][0]["ip"]
    assert ShortCode.from_text(v["code_ipv6"]["text"]).to_bytes().hex() == v["code_ipv6"]["binary"]
    for form in v["accepted_text_forms"]:
        assert ShortCode.from_text(form) == code
    for case in v["refused"]:
        with pytest.raises(ShortCodeError):
            if "text" in case:
                ShortCode.from_text(case["text"])
            else:
                ShortCode.from_bytes(bytes.fromhex(case["binary"]))
    hs = v["handshake"]
    label = bytes.fromhex(hs["short_table_id"])
    assert label == b"buraco-p2p short invite v1"
    h0 = hashlib.sha256(b"buraco-p2p handshake v1\x00" + bytes((len(label),)) + label).digest()
    assert h0.hex() == hs["H0"]
    m1 = bytes.fromhex(hs["m1"])
    assert m1[:6] == (42).to_bytes(4, "big") + b"\x02\x04"
    hint_input = b"buraco-p2p v2 secret hint\x00" + bytes((len(label),)) + label
    assert m1[38:] == hmac.new(code.room_secret, hint_input, hashlib.sha256).digest()[:8]
    # The host's second frame (counter 1 from responder to initiator) opens to the invite.
    frame = bytes.fromhex(v["host_frames"]["invite_frame"])
    nonce = bytes(4) + (1).to_bytes(8, "big")
    plain = ChaCha20Poly1305(bytes.fromhex(hs["k_ri"])).decrypt(nonce, frame[6:], frame[:6])
    assert plain.hex() == v["host_frames"]["invite_message"]
    tag, binary = codec.unpack(plain)
    assert tag == "invite"
    assert Invite.from_bytes(binary).room_secret == code.room_secret
