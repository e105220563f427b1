"""Consumer-group state kept by the broker: committed offsets (and, later, membership)."""
