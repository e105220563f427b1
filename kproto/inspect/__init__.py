"""Looking at Kafka traffic with kproto's grammars: frames and captures as JSON lines.

``python -m kproto`` is the command (see :mod:`kproto.inspect.cli`); the
parts are usable on their own:

* :mod:`kproto.inspect.frames` -- hex text or raw bytes to frames;
* :mod:`kproto.inspect.pcap` -- a pcap/pcapng capture to TCP segments (dpkt);
* :mod:`kproto.inspect.stream` -- TCP reassembly of one direction;
* :mod:`kproto.inspect.conversation` -- frames per connection, resynchronising,
  responses paired with requests;
* :mod:`kproto.inspect.render` -- decoded frames as JSON-ready events.

Rule: this package uses only kproto's public API (decode functions, the
registry's declarations, the record readers) and dpkt, so it decodes every
key and version kproto declares, now and later.  ``import kproto`` does not
import it.
"""
