"""One module per API key: the request and response of that key, declared once.

Names follow Kafka's JSON message specs, in snake_case.  Each module exports
``REQUEST`` and ``RESPONSE`` (:class:`kproto.schema.Message`); the versions
declared here are the versions kproto can encode and decode.
"""
