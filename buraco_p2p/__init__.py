"""buraco-p2p: peer-to-peer Buraco with mental-poker shuffling and a replayed, signed move log."""

__version__ = "0.1.0"
