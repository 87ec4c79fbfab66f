"""Links behind real NATs in the namespace lab (tests/net/natlab.py), as one JSON object.

    python benchmarks/internet.py [--tries N]

Needs root, `ip netns` and nftables; prints {"skipped": reason} elsewhere.

Through the mesh (`natlab.mesh_table`: a real table; the host's router grants it a PCP
mapping, the joiners have no STUN server and no mapping, the host times their punches):

- direct_links_cone: of the 6 links between four homes behind cone NATs (`masquerade`), how
  many are direct on both ends (goal 6); joiner_links_punched_cone: of the 3 joiner-joiner
  links, how many were made by a simultaneous open.
- table_up_s_cone: from the host's invite to all four seated with every link up and direct
  (goal <= 5 s). hand_played_cone: four bots then played a hand over those links and every
  home holds the same log (hand_entries_cone entries).
- direct_links_one_symmetric: the same with one joiner's home behind `masquerade
  fully-random`: its two joiner links cannot be punched and stay on the relay (relayed_links_
  one_symmetric); its link to the host goes through the host's mapping. (The issue's goal of 3
  counts links that must all be punched, as punch_only_direct_links_one_symmetric does.)
- punch_success_rate: of `--tries` tables of three (the host and two joiners, two cone homes)
  the share whose joiner-joiner link was punched (goal >= 0.98); punch_table_s_p50/p90: the
  time from invite to that table fully direct.

With TURN (coturn in the lab's internet namespace, `natlab.lab_turn`), a host behind a
symmetric NAT (`fully-random`) with `--stun` and `--turn`, three joiners behind cone NATs with
`--stun` and `--turn` of their own (the host dials their relays, and each roster entry carries
a relayed candidate), each reply code pasted at the host as soon as it is printed:

- turn_table_up_s: from the host's invite to all four seated with every link up, the
  joiner-joiner links punched (goal <= 10 s);
- turn_relayed_links: links through a TURN relay (the three joiner-host links);
  direct_links_symmetric_host_turn: the links that still go direct or punched beside it (the
  three joiner-joiner links); turn_hand_played: four bots then played a hand over them and
  every home holds the same log;
- punched_pairs_with_turn: of the three joiner pairs, how many were punched from the settling
  to the end of that hand on both ends, never replaced by a relay (goal 3).

A cone host without a mapping whose router renumbers mid-hand (`lineplay.renumbered_table`:
the real `host` and two `join`s in three homes behind cone NATs, people at the line client
playing on as they are asked, the host's re-join code pasted once at each joiner ten seconds
after the host prints it, as a person reads it out), in seconds from the renumbering:

- cone_host_renumber_gap_s: until the table moves again, a move made since shown at every
  seat (every peer applied an entry made after the renumbering);
- cone_host_rejoin_code_s: until the host printed its re-join code (it noticed its links gone
  and asked STUN for its new address); cone_host_back_after_paste_s: from the paste at the
  last joiner until the table moved again (goal <= 15 s).

`--only turn` or `--only renumber` measures that cell alone.

Punching alone (`natlab.punch_all`: STUN, then every pair at once, no mesh):
punch_only_direct_links_cone (goal 6), punch_only_direct_links_one_symmetric (goal 3),
links_up_s_cone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "net"))

from natlab import (
    TURN_PASSWORD,
    TURN_USER,
    Lab,
    TableOutcome,
    lab_turn,
    mesh_table,
    punch_all,
    stun_lab,
    stun_responder,
    stun_turn_reach,
    turn_unavailable,
    unavailable,
)

from buraco_p2p.net.reach.turn import TurnServer


def _with_stun(lab: Lab) -> tuple[threading.Event, Any]:
    stop = threading.Event()
    return stop, stun_responder(lab, stop)


def _direct(table: TableOutcome, a: int, b: int) -> bool:
    both = (table.links.get((a, b)), table.links.get((b, a)))
    return all(how is not None and how != "relayed by the host" for how in both)


def _count(table: TableOutcome, homes: int) -> tuple[int, int, int]:
    """(direct links, relayed links, punched joiner-joiner links) of a table."""
    pairs = [(a, b) for a in range(1, homes + 1) for b in range(a + 1, homes + 1)]
    direct = sum(_direct(table, a, b) for a, b in pairs)
    relayed = sum(
        "relayed by the host" in (table.links.get((a, b)), table.links.get((b, a)))
        for a, b in pairs
    )
    punched = sum(
        table.links.get((a, b)) == table.links.get((b, a)) == "direct (punched)"
        for a, b in pairs
    )
    return direct, relayed, punched


def measure_turn() -> dict[str, Any]:
    """The symmetric host with --turn and three cone joiners (see the module's words)."""
    reason = turn_unavailable()
    if reason is not None:
        return {"turn_skipped": reason}
    with (
        stun_lab() as lab,
        tempfile.TemporaryDirectory() as work,
        lab_turn(lab, Path(work) / "coturn") as turn,
    ):
        homes = [lab.add_home(symmetric=k == 0) for k in range(4)]
        servers = [TurnServer(TURN_USER, TURN_PASSWORD, turn)]
        reach = stun_turn_reach(lab, servers, {h.index: servers for h in homes[1:]})
        table = mesh_table(homes, reach=reach, hand_dir=Path(work) / "tables",
                           timeout=300, direct_wait=20.0)  # fmt: skip
    pairs = [(a, b) for a in range(1, 5) for b in range(a + 1, 5)]
    turned = sum(
        all((how or "").startswith("relayed (TURN") for how in (table.links.get((a, b)),
                                                                  table.links.get((b, a))))
        for a, b in pairs
    )  # fmt: skip
    direct = sum(_direct(table, a, b) for a, b in pairs) - turned
    stayed = ["direct (punched)"]
    punched = sum(
        table.history.get((a, b)) == table.history.get((b, a)) == stayed
        for a, b in pairs if a != 1
    )  # fmt: skip
    return {
        "punched_pairs_with_turn": punched,
        "turn_table_up_s": table.up_s,
        "turn_relayed_links": turned,
        "direct_links_symmetric_host_turn": direct,
        "turn_hand_played": len(table.hand_digests) == 4
        and len(set(table.hand_digests.values())) == 1,
        "turn_links": {f"{a}-{b}": how for (a, b), how in sorted(table.links.items())},
    }


def measure_renumber() -> dict[str, Any]:
    """The cone host whose router renumbers (see the module's words)."""
    import trio
    from lineplay import renumbered_table

    with stun_lab() as lab, tempfile.TemporaryDirectory() as work:
        host, *joiners = (lab.add_home() for _ in range(3))
        seen = trio.run(renumbered_table, lab, host, joiners, Path(work))
    return {
        "cone_host_renumber_gap_s": round(seen.moved_s, 3),
        "cone_host_rejoin_code_s": round(seen.code_s, 3),
        "cone_host_back_after_paste_s": round(seen.after_paste_s, 3),
    }


def measure(tries: int) -> dict[str, Any]:
    out: dict[str, Any] = measure_turn()
    out.update(measure_renumber())
    with Lab() as lab, tempfile.TemporaryDirectory() as tables:
        homes = [lab.add_home() for _ in range(4)]
        table = mesh_table(homes, hand_dir=Path(tables), timeout=300)
        direct, _, punched = _count(table, 4)
        out["direct_links_cone"] = direct
        out["joiner_links_punched_cone"] = punched
        out["table_up_s_cone"] = table.up_s
        out["table_played_cone"] = all(len(v) == 3 for v in table.received.values())
        out["hand_played_cone"] = (
            len(table.hand_digests) == 4 and len(set(table.hand_digests.values())) == 1
        )
        out["hand_entries_cone"] = max(table.hand_entries.values(), default=0)
    with Lab() as lab:
        homes = [lab.add_home(symmetric=k == 3) for k in range(4)]
        table = mesh_table(homes, direct_wait=8.0)
        direct, relayed, _ = _count(table, 4)
        out["direct_links_one_symmetric"] = direct
        out["relayed_links_one_symmetric"] = relayed
        out["table_played_one_symmetric"] = all(len(v) == 3 for v in table.received.values())
    with Lab() as lab:
        homes = [lab.add_home() for _ in range(3)]
        ok, times, failures = 0, [], []
        for k in range(tries):
            table = mesh_table(homes, host_port=44000 + k, port=45000 + k, direct_wait=8.0)
            how = table.links.get((3, 2))
            if how == table.links.get((2, 3)) == "direct (punched)":
                ok += 1
                times.append(table.up_s)
            else:
                failures.append(str(how))
        out["punch_success_rate"] = round(ok / tries, 3)
        out["punch_tries"] = tries
        if len(times) >= 2:
            out["punch_table_s_p50"] = round(statistics.median(times), 3)
            out["punch_table_s_p90"] = round(statistics.quantiles(times, n=10)[-1], 3)
        out["punch_failures"] = failures[:3]
    with Lab() as lab:
        stop, stun = _with_stun(lab)
        try:
            homes = [lab.add_home() for _ in range(4)]
            start = time.perf_counter()
            links = punch_all(lab, homes, 41000)
            out["links_up_s_cone"] = round(time.perf_counter() - start, 3)
            out["punch_only_direct_links_cone"] = sum(how == "direct" for how in links.values())
        finally:
            stop.set()
            stun.join(10)
    with Lab() as lab:
        stop, stun = _with_stun(lab)
        try:
            homes = [lab.add_home(symmetric=k == 3) for k in range(4)]
            links = punch_all(lab, homes, 41000, window=1.5)
            out["punch_only_direct_links_one_symmetric"] = sum(
                how == "direct" for how in links.values()
            )
        finally:
            stop.set()
            stun.join(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=50)
    parser.add_argument("--only", choices=["turn", "renumber"], help="measure one cell alone")
    args = parser.parse_args()
    reason = unavailable()
    if reason is not None:
        print(json.dumps({"skipped": reason}))
        return
    if args.only is not None:
        print(json.dumps(measure_turn() if args.only == "turn" else measure_renumber()))
        return
    print(json.dumps(measure(max(2, min(args.tries, 500)))))


if __name__ == "__main__":
    main()
