"""The mesh: a link to every seated peer, and everything that makes and keeps those links.

Offers the play and UI layers: `mesh.Mesh` (send, broadcast, receive, `next_event`, kick,
leave) with its settings (`meshconfig`) and the events it tells its application (`events`),
`startup.host_table` / `join_table`, the lobby and the `host` / `join` commands. Its parts each
hold one concern: accepting and admitting strangers (`accepting`, `admission`), seating them
(`seating`), dialing peers (`dialing`), each link's lifecycle (`peerlinks`), relay through the
host (`relay`, `relaying`), hole punching between joiners (`punching`), what `--internet`
contacts (`internet`).

Must never: be imported by `net/channel`, `net/reach` or `net/table` (it uses all three, none
of them uses it); let one peer's broken or slow link stall another's; seat anyone the host has
not approved (or who does not come back with the identity it was seated with).
"""
