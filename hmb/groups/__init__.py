"""Consumer groups: membership and rebalances (``coordinator``, with the state
table in ``states``), committed offsets (``offsets``) and the long-poll helper
of JoinGroup and SyncGroup (``longpoll``)."""
