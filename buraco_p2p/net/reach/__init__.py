"""Reachability: how peers find each other and open a stream, before any link exists.

Offers the layers above: invites (table id, room secret, host fingerprint, addresses) and
their short codes, a joiner's reply codes, candidate addresses and the NAT class
(`candidates`), STUN, TCP hole punching by simultaneous open (`punch`), port mappings (PCP and
NAT-PMP in `portmap`, UPnP in `upnp`) and LAN discovery (`discovery`).

Must never: seat anyone, hold a link's state or a mesh (it uses only `net/channel`); contact
anything beyond the local network unless the user asked for it by name (`--internet`,
`--stun`), nor resolve a name a user typed; trust an invite, code or reply it parses: each is
checked in full and refused with a typed error.
"""
