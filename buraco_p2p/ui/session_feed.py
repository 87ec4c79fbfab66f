"""A `TableFeed` over a real networked session: the full-screen client against bot peers.

`SessionFeed.run` hosts a table in this process (your peer, all cryptography on) and starts
one `bot-peer` process per other seat, which join with the invite as a person's client would;
the snapshots are the `DriverFeed`'s, rebuilt from the session after every entry.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from buraco_p2p.bots import LEVELS
from buraco_p2p.net.channel.identity import Identity
from buraco_p2p.net.reach.invite import Invite
from buraco_p2p.play.botmarks import save_bot_keys
from buraco_p2p.play.botpeer import level_args
from buraco_p2p.play.cluster import Cluster
from buraco_p2p.play.node import open_node
from buraco_p2p.rules import RuleSet
from buraco_p2p.ui.driver_feed import DriverFeed

__all__ = ["SessionFeed"]


class SessionFeed(DriverFeed):
    """You at a new table with bot peer processes in the other seats."""

    def __init__(
        self, rules: RuleSet, identity: Identity, root: Path, *, bots: str = "",
        think: float | None = None,
    ) -> None:  # fmt: skip
        super().__init__(rules, "network table (bot peers)")
        self.identity = identity
        self.root = root
        self.log_root = root
        self.bot_kind = bots
        self.think = think
        self.bots = True
        self.bot_level = bots if bots in LEVELS else ""
        self.line(None, "setting up the table: bots are joining")

    async def run(self) -> None:
        rules = self.rules
        assert rules is not None
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        bot_root = Path(tempfile.mkdtemp(prefix="bots-", dir=self.root))
        peer_args = level_args(self.bot_kind, self.think)
        cluster = Cluster(rules.players, bot_root, None, humans=[0], peer_args=peer_args)

        def on_invite(inv: Invite) -> None:
            cluster.invite = inv.to_text()
            for i in range(1, rules.players):
                cluster.join(i)

        try:
            await self._play(cluster, on_invite)
        finally:
            d = self.driver
            if d is None or d.peer.table.closed:  # no table, or over: the bots are not needed
                shutil.rmtree(bot_root, ignore_errors=True)

    async def _play(self, cluster: Cluster, on_invite: Callable[[Invite], None]) -> None:
        rules = self.rules
        assert rules is not None
        with cluster:
            async with open_node(self.identity, self.root, rules=rules,
                                 on_invite=on_invite) as driver:  # fmt: skip
                self.attach(driver)
                t = driver.peer.table
                # Every other seat is a bot peer we started: marked again on `resume`.
                others = frozenset(k.raw for k in t.terms.keys if k.raw != self.identity.public.raw)
                save_bot_keys(self.root, t.terms.table_id, others)
                self.line(None, f"table {t.terms.table_id.hex()}: all proofs on")
                await self.follow()
