"""The network layer's channel."""
