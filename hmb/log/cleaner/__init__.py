"""Log compaction: Kafka's log cleaner for topics whose ``cleanup.policy`` has ``compact``.

``offset_map`` holds the bounded key map, ``rules`` every retention rule of a
cleaning, ``rewrite`` the file work off the partition's lock, ``swap`` the
crash-safe replacement of segments (and its recovery at load), ``cleaner``
the scheduling, threads and per-partition state.  The record codec work is
:mod:`kproto.records.compact`.  This package imports nothing at its top, so
that :mod:`hmb.log.partition` can use ``swap`` without a cycle.
"""
