"""The log layer: Kafka's on-disk layout, nothing about requests.

``<log.dirs>/<topic>-<partition>/<20-digit base offset>.log`` holds record
batches exactly as they arrived (offsets patched), ``.index`` the sparse
offset index, ``.txnindex`` (only where ABORT markers are) the aborted
transactions.  :class:`~hmb.log.manager.LogManager` owns the directories,
:class:`~hmb.log.partition.PartitionLog` one partition,
:class:`~hmb.log.segment.LogSegment` one file pair.

Rules of this package: it imports nothing of ``hmb.api`` or ``hmb.net`` and
no Kafka error codes.  Reads hand out :class:`~hmb.log.region.FileRegion`
(the one type of the log the layers above see besides the log objects),
refusals are the exceptions of :mod:`hmb.log.errors` (the API layer maps
them to codes), and the layout of an entry is read through
:mod:`kproto.records.entry`.
"""
