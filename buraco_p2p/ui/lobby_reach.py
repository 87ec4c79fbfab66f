"""`--internet`, `--upnp` and `--stun` in the full-screen lobby: the same steps as the line
client (`net.mesh.commands.host_reach`, `net.mesh.internet.prepare_reply_code`), reported in
their places on the lobby screen instead of printed.

The host's steps (`host_output`) report the port mapping's state in words into the lobby's
"Port mapping" row, every other line into the lobby's notices, and a new invite (UPnP answers
late) into the invite on screen. A joiner's reply code (`joiner_say`) goes to its own block on
the screen, to select and copy, with why the host needs it; every other line is a notice.
Once the match has started the same steps report into the table's feed instead.
The options themselves travel as the parsed command line (`reach`), untouched, so whatever
`host_reach` learns to do with a new option the full-screen client does too.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from buraco_p2p.net.mesh.commands import ReachOutput
from buraco_p2p.net.mesh.mesh import Mesh
from buraco_p2p.net.reach.candidates import CandidateKind
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.net.reach.reply import TEXT_PREFIX
from buraco_p2p.ui.lobby_model import LobbyModel

__all__ = ["address_words", "asks_reach", "host_output", "joiner_say", "stun_of"]

# How each address in the invite was learnt, in the lobby's words.
KIND_WORDS = {
    CandidateKind.HOST: "this machine",
    CandidateKind.MAPPED: "mapped",
    CandidateKind.REFLEXIVE: "public (STUN)",
}


def asks_reach(reach: argparse.Namespace | None) -> bool:
    """Whether the command line asks for anything beyond the local network."""
    if reach is None:
        return False
    return any(bool(getattr(reach, name, None)) for name in ("internet", "upnp", "stun", "turn"))


def stun_of(reach: argparse.Namespace | None) -> list[str]:
    """The `--stun` values given (none without a command line)."""
    return list(getattr(reach, "stun", None) or ()) if reach is not None else []


def address_words(invite: Invite) -> list[tuple[str, str]]:
    """Each address of `invite` with how it was learnt: those players outside the host's
    network can use first (mapped, public), then this machine's own."""
    out: list[tuple[str, str]] = []
    inside: list[tuple[str, str]] = []
    for ep, kind in zip(invite.addresses, invite.kinds, strict=True):
        try:
            word = KIND_WORDS.get(CandidateKind(kind), f"kind {kind}")
        except ValueError:
            word = f"kind {kind}"
        (inside if kind == CandidateKind.HOST else out).append((str(ep), word))
    return out + inside


def host_output(
    model: LobbyModel,
    show_invite: Callable[[Mesh], None],
    table: Callable[[str], None] | None = None,
) -> ReachOutput:
    """Where the host's reach steps report on the lobby screen; once the lobby has become
    the table (`model.active` false), into the table's feed (`table`): the lobby is no longer
    drawn, and the steps run on (a late UPnP answer, a public address that changed)."""

    def at_table() -> bool:
        return table is not None and not model.active

    def say(text: str) -> None:
        if table is not None and at_table():
            table(text.removeprefix("* "))
        else:
            model.out(text)

    def mapping(text: str) -> None:
        model.mapping = text
        model.on_change()

    def invite(mesh: Mesh) -> None:
        show_invite(mesh)
        if table is not None and at_table():
            where = f" (written to {model.invite_file})" if model.invite_file else ""
            table(f"the invite changed (a new address){where}: a player whose link does not "
                  "come back joins again with it")  # fmt: skip
        else:
            model.say("the invite above changed (a new address): give the players this one")

    return ReachOutput(say=say, invite=invite, mapping=mapping)


def joiner_say(model: LobbyModel) -> Callable[[str], None]:
    """A joiner's reach lines: its reply code into the screen's reply code block (with why
    the host needs it), everything else into the notices."""

    def say(text: str) -> None:
        if text.strip().upper().startswith(f"{TEXT_PREFIX}-"):
            model.reply_code = text.strip()
            model.on_change()
        else:
            model.out(text)

    return say
