"""RemoveRaftVoter (api key 81), version 0.

Remove a voter from the KRaft quorum (KIP-853); brokers forward it.

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Uuid
from kproto.schema import Field, Message, String

REQUEST = Message("RemoveRaftVoterRequest", api_key=81, valid="0", flexible="0+", fields=[
    Field("cluster_id", String, nullable="0+"),
    Field("voter_id", Int32),
    Field("voter_directory_id", Uuid),
])

RESPONSE = Message("RemoveRaftVoterResponse", api_key=81, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
])
