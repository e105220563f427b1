"""The network layer: a trio listener and one task group per connection."""
