"""SaslHandshake (api key 17), versions 0-1.

Choose the SASL mechanism before authenticating; v1 moves the tokens into
SaslAuthenticate requests.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16
from kproto.schema import Array, Field, Message, String

REQUEST = Message("SaslHandshakeRequest", api_key=17, valid="0-1", fields=[
    Field("mechanism", String),
])

RESPONSE = Message("SaslHandshakeResponse", api_key=17, valid="0-1", fields=[
    Field("error_code", Int16),
    Field("mechanisms", Array(String)),
])
