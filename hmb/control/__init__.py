"""Control of a broker under test: inspect its state, inject faults, move its clock, seed and snapshot it.

:class:`hmb.control.api.Control` holds the operations; the embedded broker
(:mod:`hmb.embedded`) offers them as plain methods, and the wire endpoint
(:mod:`hmb.control.wire`, off unless ``control.listener`` is set) offers
them to a test in another process.  Nothing here is imported by a broker
that is not under control.
"""
