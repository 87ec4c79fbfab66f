"""Sides and match sides by their players' names, as the screens label them."""

from __future__ import annotations

from buraco_p2p.ui.client import Client


def group_name(client: Client, seats: tuple[int, ...], groups: int) -> str:
    """A side or match side by its players: `You` or the nickname for one player; `Us` for
    this seat's team, `Them` for the other of two, else the players' names."""
    snap = client.snap
    if len(seats) == 1:
        return "You" if seats[0] == snap.me else snap.seats[seats[0]].nick
    if snap.me in seats:
        return "Us"
    if groups == 2:
        return "Them"
    return "+".join(snap.seats[s].nick for s in seats)


def side_name(client: Client, side: int) -> str:
    """A side of the hand in play, by its players (see `group_name`)."""
    snap = client.snap
    return group_name(client, snap.side_seats(side), len(snap.sides))


def match_side_name(client: Client, match_side: int) -> str:
    snap = client.snap
    return group_name(client, snap.match_side_seats(match_side), len(snap.scores))
