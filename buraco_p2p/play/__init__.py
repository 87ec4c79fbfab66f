"""Network play: a session `Peer` driven over a `Mesh`, with everything it needs on disk.

The session layer is sans-IO; this package is where its outputs meet sockets, clocks and
files. `store` keeps one table's directory (the log, written and fsync'd before an entry is
acted on, the secret the peer's randomness derives from, the invite to reconnect with);
`keyed` is that randomness, a function of the secret and the log position so that a
restarted peer rebuilds exactly the entries and keys it had; `driver` runs one peer over a
mesh (entries out and in, catch-up after a reconnect, clock ticks); `genesis` agrees the
signed terms over the mesh; `netselfplay` runs bot peers as processes on loopback.
"""
