"""The log layer: Kafka's on-disk layout, nothing about requests.

``<log.dirs>/<topic>-<partition>/<20-digit base offset>.log`` holds record
batches exactly as they arrived (offsets patched), ``.index`` the sparse
offset index.  :class:`~hmb.log.manager.LogManager` owns the directories,
:class:`~hmb.log.partition.PartitionLog` one partition,
:class:`~hmb.log.segment.LogSegment` one file pair.
"""
