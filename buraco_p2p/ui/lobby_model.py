"""The full-screen lobby's state and keys, over the same `net.lobby.Lobby` as the line lobby.

`LobbyModel` keeps what the lobby screen draws (the invite, the seats from the mesh's roster,
the join request waiting for the host's answer, the rules, the lobby's notices and chat) and
turns keys into the lobby's intents. Every intent that touches the network is a trio function
handed back to the application to run (`key()` returns it), so the key handlers never block.

A join request is answered only by `y` or `n` typed while it is on screen (and after the
lobby's reading delay); chat is typed on its own line and sent as chat whatever it says, so
a chat line "y" can never seat anyone. The host picks the rules here (a preset by `p`, an
override `KEY=VALUE` by `o`) and every change is sent to the table as `["rules", preset,
[overrides]]`, again whenever a seat is taken, so the joiners see what they will play; the
genesis the host proposes at the start is what binds.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from enum import Enum
from pathlib import Path
from typing import Any

import trio

from buraco_p2p.bots.selfplay import UsageError, resolve_rules
from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.mesh.lobby import Lobby
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.table.appmessages import (
    MAX_RULE_OVERRIDES,
    MAX_RULE_TEXT,
    printable,
    rules_announced,
    tagged,
)
from buraco_p2p.rules import PRESETS, RuleSet

__all__ = ["LobbyModel", "Typing", "is_reply_code"]

MAX_LOG = 200

Intent = Callable[[], Awaitable[object]]


def is_reply_code(text: str) -> bool:
    """Whether a typed or pasted line is a reply code (`BRR-...`), as the line lobby tells
    them from chat."""
    return text.strip().upper().startswith("BRR-")


class Typing(Enum):
    """What the line being typed at the bottom of the lobby is for."""

    CHAT = "chat"
    RULE = "rule"
    REPLY = "reply"  # host: a reply code a joiner sent, pasted


class LobbyModel:
    """One terminal's lobby on screen: host (`rules` given) or joiner."""

    def __init__(self, nickname: str, fingerprint: str, *, rules: RuleSet | None,
                 preset: str = "classic", overrides: tuple[str, ...] = ()) -> None:  # fmt: skip
        self.nickname = nickname
        self.fingerprint = fingerprint
        self.is_host = rules is not None
        self.rules = rules  # the host's choice; a joiner's is what the host announced
        self.preset = preset
        self.overrides = overrides
        self.minutes: int | None = None  # the host's --minutes, kept through rule changes
        self.rules_note = "" if rules is not None else "waiting for the host's rules"
        self.active = True  # False once the match starts: the table screen takes over
        self.status = "starting"
        self.invite = ""
        self.short = ""
        self.invite_file: Path | None = None
        self.host_fingerprint = ""
        # --internet/--upnp/--stun: the invite's addresses with how each was learnt, the
        # port mapping's state in words (host), our reply code for the host to paste (joiner)
        self.reaching = False
        self.addresses: list[tuple[str, str]] = []
        self.mapping = ""
        self.reply_code = ""
        self.on_reply: Callable[[str], Intent] | None = None  # host: answer a pasted code
        self.lobby: Lobby | None = None
        self.mesh: Mesh | None = None
        self.log: list[str] = []
        self.typing: Typing | None = None
        self.text = ""
        self.kicking = False
        self.notice = ""
        self.on_change: Callable[[], None] = lambda: None
        self._clock_offset = 0.0  # time.monotonic() - trio.current_time()

    @property
    def bots(self) -> frozenset[bytes]:
        """Identity keys of the seats marked "bot": the lobby's (the bot peers this host
        started, or on a joiner the ones the host's `bots` message named)."""
        return self.lobby.bots if self.lobby is not None else frozenset()

    # -- from the lobby (trio side) -------------------------------------------------------

    def out(self, text: str) -> None:
        """The lobby's output: notices and chat, one entry per line (the seat lists the line
        lobby prints are left out, headings too: the screen shows the seats above)."""
        lines = text.split("\n")
        kept = [line for line in lines if not line.startswith("  seat ")]
        if len(kept) == 1 < len(lines) and kept[0].endswith(":"):
            kept = []  # a seat list's heading, "* seated (2/4):": the seats are drawn above
        self.log.extend(kept)
        del self.log[:-MAX_LOG]
        self.on_change()

    def say(self, text: str) -> None:
        self.out(f"* {text}")

    def attach(self, lobby: Lobby) -> None:
        """Show `lobby` (its mesh is up); called in the trio run."""
        self.lobby = lobby
        self.mesh = lobby.mesh
        self._clock_offset = time.monotonic() - trio.current_time()
        lobby.on_message = self._on_message
        self.status = "host" if self.is_host else "seated"
        self.on_change()

    def deadline(self) -> float | None:
        """When (on `time.monotonic()`) the join request on screen expires, if one is."""
        lobby = self.lobby
        req = lobby.request if lobby is not None else None
        if req is None or req.deadline == float("inf"):
            return None
        return req.deadline + self._clock_offset

    def _on_message(self, peer: PeerKey, message: Any) -> bool:
        if not tagged(message, "rules"):
            return False
        mesh = self.mesh
        roster = mesh.roster if mesh is not None else None
        if self.is_host or roster is None or peer != roster.host.key:
            return True  # only the host announces rules; anyone else's is dropped
        announced = rules_announced(message)
        if announced is None:
            self.rules_note = "the host sent rules this client cannot read"
            self.on_change()
            return True
        preset, overrides = announced[0][:MAX_RULE_TEXT], announced[1]
        self.preset, self.overrides = preset, overrides
        try:
            self.rules = resolve_rules(preset, overrides, roster.seats)
            self.rules_note = ""
        except UsageError as exc:
            self.rules = None
            self.rules_note = f"the host's rules are not known here: {printable(str(exc), 80)}"
        self.say(f"the host chose the rules: {self.rules_text()}")
        return True

    def rules_text(self) -> str:
        over = ", ".join(printable(o, 40) for o in self.overrides)
        return printable(self.preset, 40) + (f" with {over}" if over else "")

    async def announce_rules(self, seats: int = 0) -> None:
        """Host: tell the table the rules chosen (again when the seats change)."""
        if self.mesh is None or not self.is_host:
            await trio.lowlevel.checkpoint()
            return
        try:
            await self.mesh.broadcast(["rules", self.preset, list(self.overrides)])
        except NetError as exc:
            self.say(f"the rules could not be sent: {exc}")

    # -- keys (application side) ------------------------------------------------------------

    def key(self, key: str) -> Intent | str | None:
        """One key: an intent for the trio side, "quit", or None (the screen changed only)."""
        self.notice = ""
        if self.typing is not None:
            return self._typing_key(key)
        if self.kicking:
            self.kicking = False
            if key.isdigit():
                return self._line(f"/kick {key}")
            self.notice = "kick cancelled"
            return None
        if key in ("q", "c-c"):
            return "quit"
        if key in ("y", "n", "Y", "N"):
            if self.lobby is None or self.lobby.request is None:
                self.notice = "no join request is waiting for an answer"
                return None
            return self._line(key.lower())
        if key == "r":
            return self._line("/ready")
        if key in ("c", "enter"):
            self.typing, self.text = Typing.CHAT, ""
            return None
        if key == "k" and self.is_host:
            self.kicking = True
            self.notice = "kick which seat? press its number (any other key cancels)"
            return None
        if key in ("p", "P") and self.is_host:
            return self._cycle_preset(1 if key == "p" else -1)
        if key == "o" and self.is_host:
            self.typing, self.text = Typing.RULE, ""
            return None
        if key == "v" and self.is_host:
            self.typing, self.text = Typing.REPLY, ""
            return None
        if self.lobby is not None and self.lobby.request is not None:
            self.notice = "answer the join request with y or n"
        return None

    def _typing_key(self, key: str) -> Intent | None:
        if key in ("escape", "c-c"):
            self.typing = None
            return None
        if key in ("backspace", "c-h"):
            self.text = self.text[:-1]
            return None
        if key == "enter":
            kind, text = self.typing, self.text.strip()
            self.typing, self.text = None, ""
            if kind is Typing.RULE:
                return self._set_override(text)
            if kind is Typing.REPLY or is_reply_code(text):
                return self._reply(text)  # as the line lobby routes a pasted BRR- line
            lobby = self.lobby
            if not text or lobby is None:
                return None
            return lambda: lobby.chat(text)
        if len(key) == 1 and key.isprintable() and len(self.text) < 400:
            self.text += key
        return None

    def paste(self, text: str) -> Intent | None:
        """Text pasted into the terminal (it arrives whole, bracketed): into the line being
        typed (its line breaks are not Enter), or, with none open, a reply code is answered
        at once and anything else is ignored (a paste is never a string of keys)."""
        self.notice = ""
        flat = "".join(ch for ch in text[:4096] if ch.isprintable())  # a code is ~100
        if self.typing is not None:
            self.text = (self.text + flat)[:400]
            return None
        if is_reply_code(flat):
            return self._reply(flat.strip())
        self.notice = "pasted text ignored: press c to chat, or v to paste a reply code"
        return None

    def _reply(self, text: str) -> Intent | None:
        if not text:
            return None
        if not self.is_host or self.on_reply is None:
            self.notice = "reply codes are for the host to paste"
            return None
        return self.on_reply(text)  # it says what it dials, or why the code is refused

    def _line(self, line: str) -> Intent | None:
        lobby = self.lobby
        if lobby is None:
            self.notice = "not at a table yet"
            return None
        return lambda: lobby.handle_line(line)

    def _seats(self) -> int | None:
        roster = self.mesh.roster if self.mesh is not None else None
        return roster.seats if roster is not None else (self.rules.players if self.rules else None)

    def _choose(self, preset: str, overrides: tuple[str, ...]) -> Intent | None:
        try:
            rules = resolve_rules(preset, overrides, self._seats(), self.minutes)
        except UsageError as exc:
            self.notice = f"not changed: {exc}"
            return None
        self.rules, self.preset, self.overrides = rules, preset, overrides
        self.say(f"rules: {self.rules_text()}")
        return self.announce_rules

    def _cycle_preset(self, step: int) -> Intent | None:
        names = list(PRESETS)
        at = names.index(self.preset) if self.preset in names else 0
        for k in range(1, len(names) + 1):
            name = names[(at + step * k) % len(names)]
            try:
                resolve_rules(name, self.overrides, self._seats(), self.minutes)
            except UsageError:
                continue
            return self._choose(name, self.overrides)
        self.notice = "no other preset takes these overrides and seats"
        return None

    def _set_override(self, text: str) -> Intent | None:
        if not text:
            return self._choose(self.preset, ())
        if len(self.overrides) >= MAX_RULE_OVERRIDES:
            self.notice = "too many overrides (an empty one clears them)"
            return None
        key = text.split("=", 1)[0].strip()
        kept = tuple(o for o in self.overrides if o.split("=", 1)[0].strip() != key)
        return self._choose(self.preset, (*kept, text[:MAX_RULE_TEXT]))
