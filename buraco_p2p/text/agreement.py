"""A void agreement under way, in words, for both clients (docs/protocol.md 4.5).

A person who looked away for a while must understand, from one line, what the others proposed,
what their own keys or commands do about it, and that a table held by a party who neither agrees
nor plays on names that party too once the others have waited twice the table's timeout for its
signature ("Retries"). And where their own client cannot agree (the parties named are not late
at its clock), the reason, instead of a silent refusal. Pure: text in, text out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from buraco_p2p.session.events import Rewrite, VoidHeld

__all__ = [
    "ACTIONS",
    "held_text",
    "left_text",
    "not_late_text",
    "proposal_text",
    "rewrite_text",
    "warning_text",
]

# What each agreement does, completed by the parties it names.
ACTIONS = {
    "end": "end the match without",
    "void": "void this hand and deal again without",
    "replace": "seat bots for",
}


def held_text(ev: VoidHeld, nick: Callable[[int], str]) -> str | None:
    """The void round we signed waited twice the timeout for parties that did not sign it:
    "retry" (we signed the next try naming them too), "held" (naming them would leave too few
    to sign: we wait and name nobody). None for "lower" (the round applied says itself)."""
    who = ", ".join(nick(p) for p in ev.parties)
    if ev.outcome == "retry":
        return f"{who} did not sign the agreement: signed it again naming {who} too"
    if ev.outcome == "held":
        return (f"{who} did not sign the agreement, and too few would be left to name "
                f"{who} too: waiting (nobody is named)")  # fmt: skip
    return None


def left_text(seconds: float) -> str:
    """A time left, as a clock (`1:47`)."""
    s = max(0, int(seconds + 0.999))
    return f"{s // 60}:{s % 60:02d}"


def proposal_text(by: str, action: str, silent: Sequence[str]) -> str:
    """What another party proposed: `Ana proposes to end the match without Bia`."""
    what = ACTIONS.get(action, action + " without")
    return f"{by} proposes to {what} {', '.join(silent)}"


def warning_text(seconds: float) -> str:
    """Why a person should answer a proposal: if they neither agree nor play on, the others
    may name them too once they have waited twice the table's timeout for their signature."""
    if seconds <= 0:
        return "if you neither agree nor play on, the others may name you too now"
    return ("if you neither agree nor play on, the others may name you too in "
            f"{left_text(seconds)}")  # fmt: skip


def not_late_text(nick: str, waited: bool, linked: bool) -> str:
    """Why our client cannot agree to a proposal naming `nick`: our own clock has not seen the
    table wait for them past its timeout (`waited`: the table does wait for them, not yet that
    long), or the table does not wait for them here at all (`linked`: and our link to them is
    up, so their entries reach us)."""
    if waited:
        return f"{nick} is not past the table's limit here yet"
    if linked:
        return f"{nick} is not late here: their moves reach you"
    return f"{nick} is not late here: the table is not waiting for them"


def rewrite_text(ev: Rewrite, nick: Callable[[int], str]) -> str:
    """A party signed a second entry for an index that is final in our log (docs/protocol.md
    4.6): one line naming who tried what, and that nothing changed."""
    err = ev.error
    who = nick(err.author) if err.author is not None else "someone"
    return (f"{who} signed a second, different entry {err.index} of the log, which is "
            "final here: refused, nothing changes (both signatures kept as evidence)")
