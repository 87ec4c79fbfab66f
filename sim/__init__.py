"""A deterministic adversarial simulator of buraco-p2p tables.

The session layer is sans-IO, so the real `Peer`s, the real agreement policy of the client
and real bots can run in one process under one seeded scheduler that delays, reorders, loses
and duplicates messages, skews each party's clock, crashes parties and restarts them from
their saved files, and gives some parties a hostile strategy (`sim.hostile`). After every
event the simulator checks the properties of docs/protocol.md 4.5-4.6 (`sim.checks`); a
failing schedule names its seed and the one command that replays it.

    python -m sim --seed 1234 --trace      # one schedule, what happened in it
    python -m sim --count 200              # many, from seed 0

Modules: `world` (the schedule, links and clocks), `seat` (one client: peer, policy, bot,
files), `hostile` (the strategies), `checks` (the properties), `schedule` (one schedule, many),
`memo` (pure work remembered across schedules: group operations, proof and signature
checks, decoding; for speed).
"""

from sim.schedule import Failure, Outcome, explore, replay_command, run, run_params

__all__ = ["Failure", "Outcome", "explore", "replay_command", "run", "run_params"]
