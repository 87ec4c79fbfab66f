"""Machines on one switch, each a network namespace, with faults made by nftables on the switch.

Topology (every address lives only inside the lab's own namespaces)::

    inet:    bridge "br0" 198.51.100.0/24 (natlab's shared segment, used here as a switch)
    m<i>:    "eth0" 198.51.100.<20+i>/24, its cable the switch port "m<i>"

Faults are what a real network does to TCP, made where a real network makes them, between
the machines and never inside a peer: the switch's nftables `bridge` table drops a share of
the TCP segments it forwards (`Switch.lose`: the senders retransmit, so segments arrive late
and out of order), drops everything between two machines for a while (`Switch.partition`,
healed by `Switch.heal`), and a machine's cable is pulled and plugged back
(`Switch.unplug` / `Switch.plug`). Counters on the switch say what really crossed it.

`LabCluster` runs `play.cluster.Cluster`'s bot peers, one per machine, each listening on its
machine's address only, so every link between peers goes through the switch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "net"))

from natlab import Lab, _run, unavailable

from buraco_p2p.play.cluster import Cluster

__all__ = ["LabCluster", "Machine", "Switch", "unavailable"]

_SWITCH_RULES = """
table bridge lab {
    chain between {
        type filter hook forward priority 0; policy accept;
        jump cuts
        jump loss
        jump seen
    }
    chain cuts {
    }
    chain loss {
    }
    chain seen {
    }
}
"""


@dataclass(frozen=True)
class Machine:
    index: int
    namespace: str

    @property
    def ip(self) -> str:
        return f"198.51.100.{20 + self.index}"

    @property
    def port(self) -> str:
        """Its cable's switch port."""
        return f"m{self.index}"


class Switch(Lab):
    """natlab's shared segment with plain machines on it (no routers, no NAT)."""

    machines: list[Machine]

    def _build(self) -> None:
        super()._build()
        self.machines = []
        _run("ip", "netns", "exec", self.inet, "nft", "-f", "-", stdin=_SWITCH_RULES)

    def add_machine(self) -> Machine:
        i = len(self.machines) + 1
        ns = self._ns(f"m{i}")
        made = Machine(i, ns)
        _run("ip", "-n", self.inet, "link", "add", made.port, "type", "veth", "peer", "name",
             "eth0", "netns", ns)  # fmt: skip
        _run("ip", "-n", self.inet, "link", "set", made.port, "master", "br0", "up")
        _run("ip", "-n", ns, "addr", "add", f"{made.ip}/24", "dev", "eth0")
        _run("ip", "-n", ns, "link", "set", "eth0", "up")
        # one accounting rule per direction of every pair: what crossed the switch
        for other in self.machines:
            for a, b in ((made, other), (other, made)):
                self._nft("add", "rule", "bridge", "lab", "seen", "iifname", a.port, "oifname",
                          b.port, "counter", "comment", f'"{a.index}>{b.index}"')  # fmt: skip
        self.machines.append(made)
        return made

    def _nft(self, *args: str) -> None:
        _run("ip", "netns", "exec", self.inet, "nft", *args)

    def _counters(self, chain: str) -> dict[str, int]:
        """Packets counted by each commented rule of `chain` (an uncommented one as "")."""
        out = subprocess.run(
            ["ip", "netns", "exec", self.inet, "nft", "-j", "list", "chain", "bridge", "lab",
             chain], capture_output=True, text=True, check=True,
        )  # fmt: skip
        counts: dict[str, int] = {}
        for item in json.loads(out.stdout)["nftables"]:
            rule: dict[str, Any] | None = item.get("rule")
            if rule is None:
                continue
            for expr in rule["expr"]:
                if "counter" in expr:
                    name = rule.get("comment", "")
                    counts[name] = counts.get(name, 0) + expr["counter"]["packets"]
        return counts

    def crossed(self) -> dict[tuple[int, int], int]:
        """Packets the switch forwarded from machine a to machine b, per (a, b)."""
        return {
            (int(a), int(b)): n
            for key, n in self._counters("seen").items()
            for a, b in [key.split(">")]
        }

    def lose(self, percent: int) -> None:
        """Drop `percent` of the TCP segments crossing the switch, at random (0: none)."""
        self._nft("flush", "chain", "bridge", "lab", "loss")
        if percent:
            self._nft("add", "rule", "bridge", "lab", "loss", "meta", "l4proto", "tcp", "numgen",
                      "random", "mod", "100", "<", str(percent), "counter", "drop")  # fmt: skip

    def lost(self) -> int:
        """Segments dropped by `lose` since it was last set."""
        return sum(self._counters("loss").values())

    def partition(self, side: Sequence[Machine], other: Sequence[Machine]) -> None:
        """Drop every frame between a machine of `side` and one of `other`, both ways."""
        for a in side:
            for b in other:
                for x, y in ((a, b), (b, a)):
                    self._nft("add", "rule", "bridge", "lab", "cuts", "iifname", x.port,
                              "oifname", y.port, "counter", "drop")  # fmt: skip

    def heal(self) -> int:
        """End every partition; returns how many frames they dropped."""
        dropped = sum(self._counters("cuts").values())
        self._nft("flush", "chain", "bridge", "lab", "cuts")
        return dropped

    def unplug(self, m: Machine) -> None:
        """Pull the machine's cable: its interface goes down (no carrier, no route). Returns
        once the switch has seen the carrier go (the kernel tells it a moment later), so from
        then on nothing crosses the switch to or from the machine."""
        _run("ip", "-n", m.namespace, "link", "set", "eth0", "down")
        deadline = time.monotonic() + 10
        while "state disabled" not in subprocess.run(
            ["bridge", "-n", self.inet, "link", "show", "dev", m.port],
            capture_output=True, text=True, check=True,
        ).stdout:  # fmt: skip
            if time.monotonic() > deadline:
                raise TimeoutError(f"switch port {m.port} still forwards after unplugging")
            time.sleep(0.02)

    def plug(self, m: Machine) -> None:
        """Plug it back in: the interface and its subnet route come back up."""
        _run("ip", "-n", m.namespace, "link", "set", "eth0", "up")


class LabCluster(Cluster):
    """A `Cluster` whose peer `i` runs on `machines[i]`, reachable only at its address."""

    def __init__(self, machines: Sequence[Machine], root: Path, log_dir: Path,
                 **kw: Any) -> None:  # fmt: skip
        super().__init__(len(machines), root, log_dir, **kw)
        self.machines = list(machines)

    def _argv(self, i: int, how: list[str]) -> list[str]:
        m = self.machines[i]
        return ["ip", "netns", "exec", m.namespace, *super()._argv(i, how), "--listen", m.ip]
