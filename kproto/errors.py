"""The one exception family kproto raises.

Rules of this module:

* Every failure to understand bytes surfaces as a :class:`DecodeError`
  (a :class:`KprotoError`), never as ``struct.error``, ``IndexError`` or one of
  construct's exceptions: callers such as the broker catch exactly one type
  and answer with a Kafka error code or close one connection.
* An error names *what* was being decoded (api key and version when known)
  and *where* it failed, so a log line is enough to find the culprit.
"""

from __future__ import annotations


class KprotoError(Exception):
    """Base class of every error raised by kproto."""


class DecodeError(KprotoError):
    """Bytes that do not parse as what they claim to be.

    ``api_key``/``version`` are ``None`` when the failure is not inside a
    request or response body (a record set, a frame header).  ``where`` is a
    human-readable path such as ``"topic_data -> partition_data -> records"``.
    """

    def __init__(
        self,
        message: str,
        *,
        api_key: int | None = None,
        version: int | None = None,
        where: str | None = None,
    ) -> None:
        self.api_key = api_key
        self.version = version
        self.where = where
        context = [f"{k}={v}" for k, v in (("api_key", api_key), ("version", version)) if v is not None]
        if where:
            context.append(f"at {where}")
        super().__init__(f"{message} ({', '.join(context)})" if context else message)


class CorruptRecordError(DecodeError):
    """A record set whose checksum does not match or whose framing is broken.

    Maps to Kafka's CORRUPT_MESSAGE (error code 2) on the broker.
    """


class FrameTooLargeError(DecodeError):
    """A size prefix larger than the configured maximum request/response size."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")


class EncodeError(KprotoError):
    """A value that cannot be encoded (wrong type, out of range, missing field)."""


class UnsupportedVersionError(KprotoError):
    """An api key or version kproto has no grammar for."""

    def __init__(self, api_key: int, version: int) -> None:
        self.api_key = api_key
        self.version = version
        super().__init__(f"no grammar for api_key={api_key} version={version}")
