"""The network layer's table."""
