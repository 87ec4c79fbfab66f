"""How a mesh follows its table's roster: who is seated, and what changes when that does.

The host's roster is the one list of seats (`table.py`). Each newer roster a peer adopts
starts the dialing loops toward the lower seats it now has to reach, shows `RosterChanged`,
`NicknameChanged` and `SeatFreed`, and retires the links of a peer who lost its seat (ours
all, when the seat lost is ours). The host frees a seat (a kick, or a joiner that leaves) by
sending every seated peer, the one leaving too, the roster that records it.

This is separate from the mesh proper because a roster comes from the network: whatever a
new one does to the seats is decided here in one place, checked (`succession`) before
anything changes, while the mesh keeps the links and what the application sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from buraco_p2p.net.channel.errors import MeshError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.mesh.events import NicknameChanged, RosterChanged, SeatFreed
from buraco_p2p.net.reach.candidates import CandidateKind, outside_ips
from buraco_p2p.net.reach.invite import IPAddress
from buraco_p2p.net.table.table import Departure, Roster, roster_message, succession

if TYPE_CHECKING:
    from buraco_p2p.net.mesh.core import MeshCore

__all__ = ["Seating"]


class Seating:
    """The seats of one mesh as its roster says: adopting a roster, freeing a seat."""

    def __init__(self, mesh: MeshCore) -> None:
        self.mesh = mesh

    def adopt(self, roster: Roster, sender: str = "the host") -> None:
        """Adopt `roster` if it is newer. It must keep every seat we knew, or record that
        seat's departure (`RosterError` naming `sender` otherwise, and nothing changes)."""
        mesh = self.mesh
        old = mesh.roster
        if old is not None and roster.version <= old.version:
            return
        change = succession(old, roster, sender) if old is not None else None
        if mesh.is_host and mesh.roster_saver is not None:
            mesh.roster_saver(roster)  # first: a roster that failed to save is not adopted
        mesh.roster = roster
        self._follow_relays(roster)
        my_seat = mesh.seat_of(mesh.me)
        for m in roster.members:
            if m.key == mesh.me:
                continue
            p = mesh.links.peer(m.key)
            if (
                not mesh.is_host
                and m.seat != 0
                and m.seat < my_seat
                and not p.connector
                and not mesh.closed
            ):
                p.connector = True
                mesh.nursery.start_soon(mesh.dialer.peer_connector, m.key)
        mesh.emit(RosterChanged(roster))
        if change is None:
            return
        for before, after in change.renamed:
            mesh.emit(NicknameChanged(after.key, before.nickname, after.nickname))
        for departure in change.freed:
            self._unseat(departure, old)

    def _follow_relays(self, roster: Roster) -> None:
        """A link to a member's relayed candidate reads "relayed (TURN IP)" (2.11); and a
        joiner holding a TURN relay lets the seated members' public IPs through it (2.14),
        so that one of them whose punch fails can dial it."""
        mesh = self.mesh
        for m in roster.members:
            for ep in m.relayed():
                if m.key != mesh.me:
                    mesh.turn_addresses[str(ep)] = ep.ip
        relay = mesh.turn
        if relay is not None and not mesh.is_host and not relay.closed.is_set():
            relay.want(seated_ips(roster, mesh.me))

    def _unseat(self, departure: Departure, old: Roster | None) -> None:
        mesh = self.mesh
        member = old.member(departure.key) if old is not None else None
        nickname = member.nickname if member is not None else departure.key.short()
        mesh.emit(SeatFreed(departure.key, departure.seat, nickname, departure.reason))
        why = f"{nickname} ({departure.key.fingerprint()}) was {departure.reason}"
        if departure.key == mesh.me:
            mesh.unseated = departure.reason
            runs = [p.run for p in mesh.records.values()]
        else:
            gone = mesh.records.get(departure.key)
            runs = [gone.run] if gone is not None else []
            if mesh.is_host:
                # A link still starting goes live first: it begins with the roster that
                # records the departure, the only way its peer learns of it (`PeerLinks`).
                runs = [run for run in runs if run is not None and run.up]
        for run in runs:
            if run is not None:
                mesh.nursery.start_soon(mesh.links.retire, run, why)

    def free(self, peer: PeerKey, reason: str) -> None:
        """Host: free `peer`'s seat and send the roster that records it to every seat."""
        mesh = self.mesh
        table = mesh.door.table
        if table is None or mesh.roster is None:
            raise MeshError("only the host can free a seat")
        member = mesh.roster.member(peer)
        if member is None or peer == mesh.me:
            raise MeshError(f"{peer.fingerprint()} holds no seat the host can free")
        old = mesh.roster
        roster = table.freeing(peer, reason)
        if roster is None:
            raise MeshError(f"{member.label()} holds no seat the host can free")
        # All or nothing: adopted (so saved) before the table frees the seat or the roster
        # is queued. A save that fails leaves the seat taken, the table and the mesh as they
        # were, and no roster leaves that a restarted host would not have.
        try:
            self.adopt(roster)
        except OSError as exc:
            raise MeshError(
                f"seat {member.seat + 1} ({member.label()}) stays taken: the roster that "
                f"frees it could not be saved ({exc})"
            ) from exc
        table.commit(roster)
        # The kicked peer's link is retired only once its queue drains.
        message = roster_message(roster)
        for m in old.members:  # the kicked peer too: that is how it learns
            run = mesh.live_run_or_none(m.key) if m.key != mesh.me else None
            if run is not None:
                mesh.enqueue(run, message)


def seated_ips(roster: Roster, me: PeerKey) -> list[IPAddress]:
    """Joiner: the IPs our relay lets through for the seated members (2.14): those of each
    other member's roster addresses that lead outside one network, relayed ones left out (a
    peer dials our relay from its own address, never from its TURN server's)."""
    return outside_ips(
        ep for m in roster.members if m.key != me
        for i, ep in enumerate(m.addresses) if m.kind_of(i) != CandidateKind.RELAYED
    )  # fmt: skip
