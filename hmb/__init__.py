"""hmb: the broker, layered network -> api -> log on trio.

It speaks the Kafka wire protocol through :mod:`kproto` and never imports
:mod:`hmb_client` (a test enforces the direction).
"""

__version__ = "0.1.0"
