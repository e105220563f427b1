"""Decoded requests and responses as JSON-ready dicts: one event per frame.

Rules of this module:

* An event is a plain dict of JSON types.  Bytes fields become hex (or
  base64) strings, UUID fields Kafka's text form of them (what
  ``kafka-topics --describe`` prints), construct's containers dicts; keys
  that construct keeps for itself (``_io`` ...) are dropped.
* A field the grammar declares as a record set is not dumped as bytes but
  summarised entry by entry (base offset, magic, size, record count,
  compression), and with ``records=True`` its records are decoded too, with
  :mod:`kproto.records`.  Everything is found from the message declarations
  in :mod:`kproto.registry`, so new keys and versions need nothing here.
* Whatever fails to decode becomes an ``error`` object naming kproto's
  exception class (``DecodeError``, ``UnsupportedVersionError`` ...) next to
  what could still be read (api key, version, correlation id); nothing raises.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kproto
from kproto import primitives
from kproto.api_keys import ApiKey
from kproto.records import MessageSetReader, RecordBatchReader
from kproto.records.entry import MAGIC_OFFSET, check_entry, entry_size, producer_fields
from kproto.registry import REQUESTS, RESPONSES
from kproto.schema import Array, Records

#: The grammar's UUID type; should it move, UUIDs print as plain bytes.
_UUID_TYPE: Any = getattr(primitives, "UuidType", None)

__all__ = ["Options", "api_name", "error_object", "request_event", "response_event"]

#: Bytes of an undecodable frame quoted in its event (as hex), enough to replay it.
QUOTED_FRAME_BYTES = 4096

_COMPRESSION = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


@dataclass(frozen=True)
class Options:
    """How events are rendered: ``bytes_format`` "hex" or "base64"; ``records`` decodes records."""

    bytes_format: str = "hex"
    records: bool = False

    def encode(self, data: bytes | bytearray | memoryview) -> str:
        if self.bytes_format == "base64":
            return base64.b64encode(bytes(data)).decode("ascii")
        return bytes(data).hex()


def api_name(api_key: int) -> str:
    """Kafka's name of an API key ("Metadata", "ListOffsets"), or ``"Unknown(N)"``."""
    try:
        return "".join(word.capitalize() for word in ApiKey(api_key).name.split("_"))
    except ValueError:
        return f"Unknown({api_key})"


def error_object(
    exc: BaseException | None = None, *, kind: str | None = None, message: str = ""
) -> dict[str, Any]:
    """``{"type": ..., "message": ...}`` for a kproto exception, or for a condition of the inspector."""
    if exc is None:
        return {"type": kind, "message": message}
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    for attr in ("api_key", "version", "where"):
        value = getattr(exc, attr, None)
        if value is not None:
            out[attr] = value
    return out


# ---------------------------------------------------------------- values


def _fields_of(declared: Any) -> dict[str, Any]:
    """``name -> Field`` for a sequence of field declarations; empty for anything else."""
    if isinstance(declared, (list, tuple)):
        return {f.name: f for f in declared if hasattr(f, "name") and hasattr(f, "type")}
    return {}


def _is_records(ftype: Any) -> bool:
    return ftype is Records


def _is_uuid(ftype: Any) -> bool:
    return _UUID_TYPE is not None and isinstance(ftype, _UUID_TYPE)


def kafka_uuid(data: bytes | bytearray | memoryview) -> str:
    """A UUID as Kafka prints topic and member ids: URL-safe base64 of its 16 bytes, unpadded."""
    return base64.urlsafe_b64encode(bytes(data)).decode("ascii").rstrip("=")


def to_json(value: Any, opts: Options, declared: Any = None, name: str = "") -> Any:
    """``value`` (a decoded body or part of it) as JSON types; ``declared`` its field declarations."""
    if isinstance(value, Mapping):
        fields = _fields_of(declared)
        out = {}
        for key, item in value.items():
            key = str(key)
            if key.startswith("_"):
                continue
            if key == "tagged_fields":  # tagged fields are declared beside the others
                out[key] = to_json(item, opts, declared)
                continue
            field = fields.get(key)
            out[key] = to_json(item, opts, field.type if field is not None else None, key)
        return out
    if isinstance(value, (bytes, bytearray, memoryview)):
        if _is_records(declared) or (declared is None and name == "records"):
            return records_summary(value, opts)
        if _is_uuid(declared):
            return kafka_uuid(value)
        return opts.encode(value)
    if isinstance(value, (list, tuple)):
        element = declared.of if isinstance(declared, Array) else None
        if isinstance(element, (list, tuple)):
            return [to_json(item, opts, element) for item in value]
        return [to_json(item, opts, element, name) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, int):
        return int(value)
    return str(value)


# ---------------------------------------------------------------- records


def _entry(data: bytes, opts: Options) -> dict[str, Any]:
    """One entry (a magic 2 batch or a magic 0/1 message) of a record set, summarised."""
    base_offset = int.from_bytes(data[:8], "big", signed=True)
    magic = data[MAGIC_OFFSET]
    out: dict[str, Any] = {"base_offset": base_offset, "magic": magic, "size": len(data)}
    checked = check_entry(data)
    if isinstance(checked, str):
        out["error"] = error_object(kind="CorruptRecordError", message=checked)
        return out
    last, _, max_timestamp = checked
    out["last_offset"] = last
    if magic >= 2:
        pid, epoch, base_sequence, count = producer_fields(data)
        attributes = int.from_bytes(data[21:23], "big")
        out.update(
            count=count,
            compression=_COMPRESSION.get(attributes & 0x07, attributes & 0x07),
            max_timestamp=max_timestamp,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=base_sequence,
            transactional=bool(attributes & 0x10),
            control=bool(attributes & 0x20),
        )
    else:
        attributes = data[MAGIC_OFFSET + 1]
        out.update(count=1, compression=_COMPRESSION.get(attributes & 0x07, attributes & 0x07))
        if magic == 1:
            out["timestamp"] = max_timestamp
    if opts.records:
        try:
            out["records"] = _decode_records(data, magic, opts)
        except kproto.KprotoError as exc:
            out["error"] = error_object(exc)
    return out


def _decode_records(data: bytes, magic: int, opts: Options) -> list[dict[str, Any]]:
    def value(v: bytes | None) -> str | None:
        return None if v is None else opts.encode(v)

    if magic >= 2:
        records = [r for batch in RecordBatchReader(data, allow_partial_tail=False) for r in batch.records()]
        return [
            {
                "offset": r.offset,
                "timestamp": r.timestamp,
                "key": value(r.key),
                "value": value(r.value),
                "headers": [[k, value(v)] for k, v in r.headers],
            }
            for r in records
        ]
    legacy = MessageSetReader(data, allow_partial_tail=False).records()
    return [
        {"offset": r.offset, "timestamp": r.timestamp, "key": value(r.key), "value": value(r.value)}
        for r in legacy
    ]


def records_summary(data: bytes | bytearray | memoryview, opts: Options) -> dict[str, Any]:
    """A record set as ``{"size", "count", "entries": [...]}``, plus any partial tail's size.

    Fetch responses may end with a partial entry (the broker cut at the size
    limit); it is reported as ``partial_tail_bytes`` rather than an error.
    """
    data = bytes(data)
    entries: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        size = entry_size(data, pos)
        if size <= MAGIC_OFFSET or pos + size > len(data):
            break
        entries.append(_entry(data[pos : pos + size], opts))
        pos += size
    out: dict[str, Any] = {
        "size": len(data),
        "count": sum(e.get("count", 0) for e in entries),
        "entries": entries,
    }
    if pos < len(data):
        out["partial_tail_bytes"] = len(data) - pos
    return out


# ---------------------------------------------------------------- events


def _declared(table: Mapping[int, Any], api_key: int) -> Sequence[Any] | None:
    msg = table.get(api_key)
    return getattr(msg, "fields", None)


def _quote(frame: bytes | bytearray | memoryview, opts: Options) -> dict[str, Any]:
    out: dict[str, Any] = {"frame_size": len(frame), "frame_data": opts.encode(frame[:QUOTED_FRAME_BYTES])}
    if len(frame) > QUOTED_FRAME_BYTES:
        out["frame_quoted_bytes"] = QUOTED_FRAME_BYTES
    return out


def request_event(frame: bytes, opts: Options) -> dict[str, Any]:
    """A request frame (size prefix included) as an event; never raises."""
    event: dict[str, Any] = {"direction": "request"}
    try:
        peek = kproto.peek_request(frame)
    except kproto.KprotoError as exc:
        return {**event, "error": error_object(exc), **_quote(frame, opts)}
    event.update(
        api=api_name(peek.api_key),
        api_key=peek.api_key,
        version=peek.version,
        correlation_id=peek.correlation_id,
    )
    try:
        req = kproto.decode_request(frame)
    except kproto.KprotoError as exc:
        return {**event, "error": error_object(exc), **_quote(frame, opts)}
    event["client_id"] = req.client_id
    if req.header_tagged_fields:
        event["header_tagged_fields"] = to_json(req.header_tagged_fields, opts)
    event["body"] = to_json(req.body, opts, _declared(REQUESTS, req.api_key))
    return event


def response_event(frame: bytes, api_key: int, version: int, opts: Options) -> dict[str, Any]:
    """A response frame to a request of ``api_key``/``version`` as an event; never raises.

    An ApiVersions response that does not parse at the request's version is
    tried at version 0: a broker that does not know the version a client
    asked for answers in the v0 layout, which is how clients find out.
    """
    event: dict[str, Any] = {
        "direction": "response",
        "api": api_name(api_key),
        "api_key": api_key,
        "version": version,
    }
    if len(frame) >= 8:
        event["correlation_id"] = int.from_bytes(frame[4:8], "big", signed=True)
    try:
        resp = kproto.decode_response(api_key, version, frame)
    except kproto.KprotoError as exc:
        if api_key != ApiKey.API_VERSIONS or version == 0:
            return {**event, "error": error_object(exc), **_quote(frame, opts)}
        try:
            resp = kproto.decode_response(api_key, 0, frame)
        except kproto.KprotoError:
            return {**event, "error": error_object(exc), **_quote(frame, opts)}
        event["decoded_as_version"] = 0
    event["body"] = to_json(resp.body, opts, _declared(RESPONSES, api_key))
    return event
