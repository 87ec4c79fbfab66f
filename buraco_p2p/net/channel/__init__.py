"""The secure channel: one authenticated, encrypted link between two identities.

Offers the layers above: who a peer is (`identity`: Ed25519 keys, fingerprints, nicknames),
the handshake keyed by the invite's room secret (`handshake`), size-limited counter-nonced
frames (`framing`), a `SecureLink` that carries msgpack values in order over any trio stream
(`link`), the front door that accepts links within bounds before anyone is seated (`server`),
exactly-once delivery across reconnects (`reliable`), each link's bounded outgoing queue
(`outbox`), and the exception tree of the whole network layer (`errors`), whose messages name
the peer at fault.

Must never: know about invites, addresses, tables, seats or meshes (it imports nothing from
`net/reach`, `net/table` or `net/mesh`); act on a byte before its frame is authenticated; let
a peer that is not yet seated make it hold more than the fixed bounds in `link.PreseatLimits`.
"""
