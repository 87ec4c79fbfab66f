"""Tables at 2, 3, 4 and 6 seats where one party (or a team) withholds an entry of one kind and
the others void it out: the end-of-hand and walk-out cases of the void agreement."""

from __future__ import annotations

from collections.abc import Callable, Collection

from session_helpers import bot_chooser, identities, run_until

from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.rules import get_preset
from buraco_p2p.session import Peer, Phase, Router, decode_entry, make_genesis
from buraco_p2p.session.table import Table

TIMEOUT_S = 1.0


def router(n: int, seed: int, *, preset: str = "classic", **rules: object) -> Router:
    """A fresh table of `n` bot peers (not started); `rules` overrides the preset."""
    overrides: dict[str, object] = {"players": n, **rules}
    rules_in_force = get_preset(preset).with_overrides(overrides)
    g = make_genesis(
        b"walk-out-table-" + bytes([n]), identities(n), rules_in_force,
        timeout_ms=int(TIMEOUT_S * 1000),
    )  # fmt: skip
    peers = [
        Peer(g, identities(n)[k], DeterministicRandomSource(bytes([seed, k]) * 16))
        for k in range(n)
    ]
    return Router(peers, bot_chooser(seed), relay=True)


def withhold(r: Router, parties: Collection[int], kind: str) -> None:
    """From now on the entries of `kind` that `parties` sign reach nobody (they still hold
    and apply them themselves: they saw what they saw)."""

    def tamper(sender: int, receiver: int, data: bytes) -> bytes | None:
        e = decode_entry(data)
        if e.author in parties and e.kind == kind:
            return None
        return data

    r.tamper = tamper


def stuck_at(r: Router, present: list[int], phase: Phase) -> None:
    """Deliver everything, and check that every present party's table waits in `phase`."""
    r.run()
    for p in present:
        assert r.peers[p].table.phase is phase, (p, r.peers[p].table.phase)


def void_out(r: Router, present: list[int], action: str, silent: tuple[int, ...]) -> None:
    """Past the timeout, the present parties agree to `action` naming `silent`."""
    r.silent = set(silent)
    r.advance(2 * TIMEOUT_S)
    for p in present:
        r.act(p, r.peers[p].propose_void(action, r.now, silent=silent))
    r.run()


def until(r: Router, done: Callable[[Table], bool], party: int = 0) -> None:
    t = r.peers[party].table
    run_until(r, lambda: done(t))
    assert done(t)


def partner_of(t: Table, party: int) -> int | None:
    """A party on the same side as `party` at the deal (None at two and three seats)."""
    assert t.match is not None
    seat = t.party_seat[party]
    for q in range(t.n):
        if q != party and t.match.side_of(t.party_seat[q]) == t.match.side_of(seat):
            return q
    return None
