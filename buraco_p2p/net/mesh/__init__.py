"""The network layer's mesh."""
