"""The network layer's reach."""
