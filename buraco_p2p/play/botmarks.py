"""Which seats of a saved table are bots, kept beside its roster: `bots` in the table directory.

A host knows its bot peers because it made their identities; a joiner knows them from the
host's `["bots", [key, ...]]` in the lobby (docs/protocol.md 2.10). Neither can learn it again
from the log, which names keys and nicknames only, and a nickname claims nothing. So each
writes the identity keys it marks when its match starts, and `resume` reads them back: the
marks survive a restart, and a resumed host announces them again.

The file is a msgpack array of 32-byte identity keys (0600, like every file of the table
directory). No file: no marks (a table saved before the file existed). A damaged one is a
`StoreError` naming it, as for the table's other files.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from buraco_p2p import codec
from buraco_p2p.net.channel.errors import NetError
from buraco_p2p.net.channel.identity import PeerKey
from buraco_p2p.net.table.appmessages import bots_message
from buraco_p2p.net.table.table import MAX_SEATS
from buraco_p2p.play.driver import Driver
from buraco_p2p.play.store import StoreError, TableStore
from buraco_p2p.privatefile import write_private

__all__ = ["BOTS_FILE", "announce_resumed_bots", "load_bot_keys", "save_bot_keys"]

BOTS_FILE = "bots"


def _path(root: Path, table_id: bytes) -> Path:
    return TableStore.for_table(table_id, root).path / BOTS_FILE


def save_bot_keys(root: Path, table_id: bytes, keys: frozenset[bytes]) -> None:
    """Write the marks of a table whose directory exists (sorted: the same set, the same
    bytes)."""
    write_private(_path(root, table_id), codec.pack(sorted(keys)))


def load_bot_keys(root: Path, table_id: bytes) -> frozenset[bytes]:
    """The saved marks; none if the file is absent; `StoreError` if it is damaged."""
    path = _path(root, table_id)
    if not path.exists():
        return frozenset()
    try:
        value = codec.unpack(path.read_bytes())
    except OSError as exc:
        raise StoreError(f"{path}: {exc.strerror or exc}") from None
    except codec.CodecError as exc:
        raise StoreError(f"{path}: not msgpack ({exc})") from None
    if not isinstance(value, list) or len(value) > MAX_SEATS - 1:
        raise StoreError(f"{path}: not an array of at most {MAX_SEATS - 1} identity keys")
    keys: set[bytes] = set()
    for key in value:
        try:
            PeerKey(key)
        except (ValueError, TypeError):
            raise StoreError(f"{path}: holds something that is not an identity key") from None
        if key in keys:
            raise StoreError(f"{path}: names a key twice")
        keys.add(key)
    return frozenset(keys)


async def announce_resumed_bots(driver: Driver, bot_keys: frozenset[bytes]) -> None:
    """A resumed host tells the table again which seats are its bots (docs/protocol.md
    2.10): a peer that restarted too has only what it saved. Queued for every seated peer,
    so one that is not connected yet gets it when it is."""
    mesh = driver.mesh
    if mesh.is_host and mesh.roster is not None and bot_keys:
        with contextlib.suppress(NetError):
            await mesh.broadcast(bots_message(bot_keys, mesh.roster))
