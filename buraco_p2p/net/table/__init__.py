"""The table: who is seated, and the messages that seat them, sans-IO.

Offers the mesh above: the host's seating state (`table.HostTable`: approval, the lowest free
seat, a returning identity's old seat), the `Roster` every peer agrees on, the join, welcome
and roster messages built and checked in full (`table`), and the application messages the
seated say to each other before the match (`appmessages`: chat, ready, rules, bots), each read
against a roster.

Must never: do I/O, hold a link or a mesh, or read a clock; it uses `net/channel` for
identities and errors and `net/reach`'s invite module only for the addresses a join carries.
"""
