"""A real two-hand match and what each player's table said during it, to replay against.

`live_match()` plays the match `buraco-p2p selfplay --rules classic --seed SEED --rule hands=2
--log FILE` plays (the same peers, keys, bots and random sources; `test_the_live_match_is_
selfplays` checks the bytes are the same), and while it runs, follows every party's own view of
the table after each delivery with the narrator, exactly as the full-screen table's feed does
(`DriverFeed._tell_moves`): so `feeds[party]` holds, move by move, the words that party's
feed gave at the table, its own drawn cards included once its shares arrived.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

from buraco_p2p.bots import DEFAULT_LEVEL, make_bot
from buraco_p2p.bots.selfplay import match_rng
from buraco_p2p.crypto import DeterministicRandomSource
from buraco_p2p.engine import HandState, Move
from buraco_p2p.logfile import encode_log
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.rules import RuleSet, get_preset
from buraco_p2p.session import Peer, Router, make_genesis
from buraco_p2p.text.glyphs import Glyphs
from buraco_p2p.text.narration import Narrator

SEED = 3
PLAYERS = 4


def rules() -> RuleSet:
    return get_preset("classic").with_overrides({"hands": 2})


def selfplay_args(path: str) -> list[str]:
    """The command line that writes the same match's log."""
    return ["selfplay", "--rules", "classic", "--seed", str(SEED), "--rule", "hands=2",
            "--log", path]  # fmt: skip


def _derive(what: str) -> bytes:
    return hashlib.sha256(f"buraco-p2p/selfplay-log/{SEED}/{what}".encode()).digest()


@dataclass(frozen=True)
class Live:
    log: bytes  # the log file
    feeds: dict[int, list[tuple[str, ...]]]  # party -> each move's lines, in order
    dealt: dict[int, list[tuple[int, ...]]]  # party -> its cards as dealt, hand by hand
    seating: tuple[int, ...]  # the party at each seat
    nicknames: tuple[str, ...]  # by party


@cache
def live_match() -> Live:
    r = rules()
    ident = [Identity.from_seed(_derive(f"identity/{p}"), f"bot{p}") for p in range(PLAYERS)]
    genesis = make_genesis(_derive("table")[:16], ident, r)
    peers = [Peer(genesis, ident[p], DeterministicRandomSource(_derive(f"peer/{p}")))
             for p in range(PLAYERS)]  # fmt: skip
    bots = [make_bot(DEFAULT_LEVEL) for _ in range(PLAYERS)]  # selfplay's own
    rng = match_rng(SEED, 1)

    def choose(party: int, view: HandState) -> Move:
        return bots[peers[party].table.party_seat[party]].choose_move(view, rng)

    router = Router(peers, choose)
    router.start()
    glyphs = Glyphs(deck_size=r.deck_size)
    narrators: dict[int, Narrator] = {}
    feeds: dict[int, list[tuple[str, ...]]] = {p: [] for p in range(PLAYERS)}
    dealt: dict[int, list[tuple[int, ...]]] = {p: [] for p in range(PLAYERS)}
    while router.queue:
        router.run(1)
        for p, peer in enumerate(peers):
            t = peer.table
            if not t.seating:
                continue
            if p not in narrators:
                me = t.party_seat[p]
                nicks = [t.terms.nicknames[t.seating[s]] for s in range(PLAYERS)]
                narrators[p] = Narrator(lambda s, me=me, n=nicks: "you" if s == me else n[s],
                                        glyphs)  # fmt: skip
            feeds[p].extend(step.lines for step in narrators[p].follow(t.view))
            view, hand = t.view, t.hand
            if view is not None and hand is not None and len(dealt[p]) == hand.number:
                dealt[p].append(tuple(view.known[s] for s in view.hands[t.party_seat[p]]))
    first = peers[0].table
    assert first.closed
    return Live(
        encode_log(e.wire for e in first.log), feeds, dealt, tuple(first.seating),
        tuple(first.terms.nicknames),
    )  # fmt: skip
