"""TEMPORARY grammars of the security API keys, for testing their handlers before
kproto has them (another branch adds kproto/messages/ modules generated from
Kafka's JSON specs, with the same snake_case field names).

``install()`` puts a grammar into kproto's registry only for a key kproto
does not declare yet, so these tests run unchanged once the real modules
land (and this file can then be deleted).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kproto import registry
from kproto.primitives import Int8, Int16, Int32, Int64
from kproto.schema import Array, Bytes, Field, Message, String

_ACL_FILTER = [
    Field("resource_type_filter", Int8),
    Field("resource_name_filter", String, nullable="0+"),
    Field("pattern_type_filter", Int8, versions="1+", default=3),
    Field("principal_filter", String, nullable="0+"),
    Field("host_filter", String, nullable="0+"),
    Field("operation", Int8),
    Field("permission_type", Int8),
]

GRAMMARS = {
    17: (
        Message("SaslHandshakeRequest", api_key=17, valid="0-1", fields=[Field("mechanism", String)]),
        Message(
            "SaslHandshakeResponse",
            api_key=17,
            valid="0-1",
            fields=[Field("error_code", Int16), Field("mechanisms", Array(String))],
        ),
    ),
    36: (
        Message(
            "SaslAuthenticateRequest",
            api_key=36,
            valid="0-2",
            flexible="2+",
            fields=[Field("auth_bytes", Bytes)],
        ),
        Message(
            "SaslAuthenticateResponse",
            api_key=36,
            valid="0-2",
            flexible="2+",
            fields=[
                Field("error_code", Int16),
                Field("error_message", String, nullable="0+"),
                Field("auth_bytes", Bytes),
                Field("session_lifetime_ms", Int64, versions="1+", default=0),
            ],
        ),
    ),
    29: (
        Message("DescribeAclsRequest", api_key=29, valid="0-3", flexible="2+", fields=_ACL_FILTER),
        Message(
            "DescribeAclsResponse",
            api_key=29,
            valid="0-3",
            flexible="2+",
            fields=[
                Field("throttle_time_ms", Int32),
                Field("error_code", Int16),
                Field("error_message", String, nullable="0+"),
                Field(
                    "resources",
                    Array(
                        [
                            Field("resource_type", Int8),
                            Field("resource_name", String),
                            Field("pattern_type", Int8, versions="1+", default=3),
                            Field(
                                "acls",
                                Array(
                                    [
                                        Field("principal", String),
                                        Field("host", String),
                                        Field("operation", Int8),
                                        Field("permission_type", Int8),
                                    ]
                                ),
                            ),
                        ]
                    ),
                ),
            ],
        ),
    ),
    30: (
        Message(
            "CreateAclsRequest",
            api_key=30,
            valid="0-3",
            flexible="2+",
            fields=[
                Field(
                    "creations",
                    Array(
                        [
                            Field("resource_type", Int8),
                            Field("resource_name", String),
                            Field("resource_pattern_type", Int8, versions="1+", default=3),
                            Field("principal", String),
                            Field("host", String),
                            Field("operation", Int8),
                            Field("permission_type", Int8),
                        ]
                    ),
                )
            ],
        ),
        Message(
            "CreateAclsResponse",
            api_key=30,
            valid="0-3",
            flexible="2+",
            fields=[
                Field("throttle_time_ms", Int32),
                Field(
                    "results",
                    Array([Field("error_code", Int16), Field("error_message", String, nullable="0+")]),
                ),
            ],
        ),
    ),
    31: (
        Message(
            "DeleteAclsRequest",
            api_key=31,
            valid="0-3",
            flexible="2+",
            fields=[Field("filters", Array(_ACL_FILTER))],
        ),
        Message(
            "DeleteAclsResponse",
            api_key=31,
            valid="0-3",
            flexible="2+",
            fields=[
                Field("throttle_time_ms", Int32),
                Field(
                    "filter_results",
                    Array(
                        [
                            Field("error_code", Int16),
                            Field("error_message", String, nullable="0+"),
                            Field(
                                "matching_acls",
                                Array(
                                    [
                                        Field("error_code", Int16),
                                        Field("error_message", String, nullable="0+"),
                                        Field("resource_type", Int8),
                                        Field("resource_name", String),
                                        Field("pattern_type", Int8, versions="1+", default=3),
                                        Field("principal", String),
                                        Field("host", String),
                                        Field("operation", Int8),
                                        Field("permission_type", Int8),
                                    ]
                                ),
                            ),
                        ]
                    ),
                ),
            ],
        ),
    ),
    50: (
        Message(
            "DescribeUserScramCredentialsRequest",
            api_key=50,
            valid="0",
            flexible="0+",
            fields=[Field("users", Array([Field("name", String)]), nullable="0+")],
        ),
        Message(
            "DescribeUserScramCredentialsResponse",
            api_key=50,
            valid="0",
            flexible="0+",
            fields=[
                Field("throttle_time_ms", Int32),
                Field("error_code", Int16),
                Field("error_message", String, nullable="0+"),
                Field(
                    "results",
                    Array(
                        [
                            Field("user", String),
                            Field("error_code", Int16),
                            Field("error_message", String, nullable="0+"),
                            Field(
                                "credential_infos",
                                Array([Field("mechanism", Int8), Field("iterations", Int32)]),
                            ),
                        ]
                    ),
                ),
            ],
        ),
    ),
    51: (
        Message(
            "AlterUserScramCredentialsRequest",
            api_key=51,
            valid="0",
            flexible="0+",
            fields=[
                Field("deletions", Array([Field("name", String), Field("mechanism", Int8)])),
                Field(
                    "upsertions",
                    Array(
                        [
                            Field("name", String),
                            Field("mechanism", Int8),
                            Field("iterations", Int32),
                            Field("salt", Bytes),
                            Field("salted_password", Bytes),
                        ]
                    ),
                ),
            ],
        ),
        Message(
            "AlterUserScramCredentialsResponse",
            api_key=51,
            valid="0",
            flexible="0+",
            fields=[
                Field("throttle_time_ms", Int32),
                Field(
                    "results",
                    Array(
                        [
                            Field("user", String),
                            Field("error_code", Int16),
                            Field("error_message", String, nullable="0+"),
                        ]
                    ),
                ),
            ],
        ),
    ),
}


@contextmanager
def installed() -> Iterator[list[int]]:
    """The missing grammars in kproto's registry for the duration; yields the keys added."""
    added = [key for key in GRAMMARS if key not in registry.REQUESTS]
    for key in added:
        registry.REQUESTS[key], registry.RESPONSES[key] = GRAMMARS[key]
    try:
        yield added
    finally:
        for key in added:
            registry.REQUESTS.pop(key, None)
            registry.RESPONSES.pop(key, None)


@contextmanager
def security_handlers() -> Iterator[None]:
    """The grammars (where kproto lacks them) and the security handlers registered, for a test."""
    import importlib

    from hmb.api.registry import HANDLERS, handles

    modules = {
        17: "sasl_handshake",
        36: "sasl_authenticate",
        29: "describe_acls",
        30: "create_acls",
        31: "delete_acls",
        50: "describe_user_scram_credentials",
        51: "alter_user_scram_credentials",
    }
    with installed():
        added = []
        for key, name in modules.items():
            if key in HANDLERS:
                continue  # the real grammar is there and the module registered itself
            module = importlib.import_module(f"hmb.api.{name}")
            low, high = module.VERSIONS
            handles(key, (low, high))(module.handle)  # type: ignore[arg-type]
            added.append(key)
        try:
            yield
        finally:
            for key in added:
                HANDLERS.pop(key, None)
