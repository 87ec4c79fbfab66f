"""Generators of protocol/vectors/: one module per layer (`crypto`, `net`, `game`), each owning
its files, and `files`, which renders, writes and checks them all.

    python -m protocol.gen            # check every file, exit 1 on any difference
    python -m protocol.gen --write    # regenerate them all
"""
