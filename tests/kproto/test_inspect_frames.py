"""``python -m kproto frame``: frames given as hex or raw bytes, decoded to JSON lines.

The frames are kproto's own encodings; the JSON must give back what was
encoded (header fields, body, record sets summarised or decoded), and
whatever cannot be decoded must come out as an error object naming
kproto's exception, never as a traceback.
"""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_support import api_versions_response, metadata_request, metadata_response

import kproto
from kproto.inspect.cli import main
from kproto.records import Compression, RecordBatchBuilder, build_message_set

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: bytes = b"") -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    status = main(["frame", *args], out=out, stdin=io.BytesIO(stdin))
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def _batch(compression: Compression = Compression.NONE) -> bytes:
    builder = RecordBatchBuilder(compression, producer_id=42, producer_epoch=1, base_sequence=0)
    builder.append(b"k1", b"v1", 1_700_000_000_000, [("h", b"x")])
    builder.append(None, b"v2", 1_700_000_000_001)
    return builder.build(10)


def _produce(version: int, records: bytes) -> bytes:
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "events", "partition_data": [{"index": 0, "records": records}]}],
    }
    return kproto.encode_request(kproto.ApiKey.PRODUCE, version, 9, body, client_id="producer")


def test_a_request_given_as_hex_on_the_command_line() -> None:
    frame = metadata_request(7)
    status, events = run(frame.hex())
    assert status == 0
    assert events == [
        {
            "frame": 0,
            "direction": "request",
            "api": "Metadata",
            "api_key": 3,
            "version": 4,
            "correlation_id": 7,
            "client_id": "tester",
            "body": {"topics": [{"name": "events"}], "allow_auto_topic_creation": True},
        }
    ]


@pytest.mark.parametrize(
    "text",
    [
        lambda f: f.hex(),
        lambda f: " ".join(f"{b:02x}" for b in f) + "\n",
        lambda f: ":".join(f"{b:02X}" for b in f),
        lambda f: "0x" + f.hex(),
        lambda f: "\n".join(f.hex()[i : i + 32] for i in range(0, len(f) * 2, 32)),
    ],
    ids=["plain", "spaced", "colons", "0x", "lines"],
)
def test_hex_in_the_forms_logs_and_tools_print(text: Any) -> None:
    status, events = run(stdin=text(metadata_request(3)).encode())
    assert status == 0
    assert [(e["api"], e["correlation_id"]) for e in events] == [("Metadata", 3)]


def test_raw_bytes_from_a_file_and_several_frames_in_a_row(tmp_path: Path) -> None:
    path = tmp_path / "frames.bin"
    path.write_bytes(metadata_request(1) + metadata_request(2, "other", version=0) + metadata_request(3))
    status, events = run(str(path))
    assert status == 0
    assert [(e["frame"], e["correlation_id"], e["version"]) for e in events] == [
        (0, 1, 4),
        (1, 2, 0),
        (2, 3, 4),
    ]
    assert events[1]["body"] == {"topics": [{"name": "other"}]}


def test_a_frame_without_its_size_prefix_is_recognised() -> None:
    frame = metadata_request(4)
    status, events = run(frame[4:].hex())
    assert status == 0
    assert events[0]["correlation_id"] == 4
    status, events = run("--no-prefix", "--response", "Metadata:4", metadata_response(4)[4:].hex())
    assert status == 0
    assert events[0]["body"]["topics"][0]["name"] == "events"


@pytest.mark.parametrize("api", ["Metadata:4", "metadata:4", "METADATA:4", "3:4"])
def test_a_response_decodes_with_the_api_and_version_of_its_request(api: str) -> None:
    status, events = run("--response", api, metadata_response(11).hex())
    assert status == 0
    (event,) = events
    assert (event["direction"], event["api"], event["version"], event["correlation_id"]) == (
        "response",
        "Metadata",
        4,
        11,
    )
    assert event["body"]["brokers"] == [{"node_id": 0, "host": "127.0.0.1", "port": 9092, "rack": None}]


def test_an_api_versions_answer_in_the_v0_layout_is_recognised() -> None:
    status, events = run("--response", "ApiVersions:3", api_versions_response(1).hex())
    assert status == 0
    assert events[0]["decoded_as_version"] == 0 and events[0]["version"] == 3
    assert events[0]["body"]["api_keys"] == [{"api_key": 3, "min_version": 0, "max_version": 8}]


def test_flexible_versions_show_their_tagged_fields() -> None:
    frame = kproto.encode_request(
        kproto.ApiKey.API_VERSIONS,
        3,
        2,
        {"client_software_name": "kcat", "client_software_version": "1.7"},
        client_id="c",
    )
    status, events = run(frame.hex())
    assert status == 0
    assert events[0]["body"] == {
        "client_software_name": "kcat",
        "client_software_version": "1.7",
        "tagged_fields": {},
    }


def test_record_sets_are_summarised_per_batch() -> None:
    status, events = run(_produce(8, _batch() + _batch(Compression.GZIP)).hex())
    assert status == 0
    records = events[0]["body"]["topic_data"][0]["partition_data"][0]["records"]
    first, second = records["entries"]
    assert records["count"] == 4 and records["size"] == first["size"] + second["size"]
    assert first == {
        "base_offset": 10,
        "magic": 2,
        "size": len(_batch()),
        "last_offset": 11,
        "count": 2,
        "compression": "none",
        "max_timestamp": 1_700_000_000_001,
        "producer_id": 42,
        "producer_epoch": 1,
        "base_sequence": 0,
        "transactional": False,
        "control": False,
    }
    assert second["compression"] == "gzip" and "records" not in second


def test_records_are_decoded_with_records_in_hex_or_base64() -> None:
    status, events = run("--records", _produce(8, _batch(Compression.GZIP)).hex())
    assert status == 0
    (entry,) = events[0]["body"]["topic_data"][0]["partition_data"][0]["records"]["entries"]
    assert entry["records"] == [
        {
            "offset": 10,
            "timestamp": 1_700_000_000_000,
            "key": b"k1".hex(),
            "value": b"v1".hex(),
            "headers": [["h", "78"]],
        },
        {"offset": 11, "timestamp": 1_700_000_000_001, "key": None, "value": b"v2".hex(), "headers": []},
    ]
    status, events = run("--records", "--bytes", "base64", _produce(8, _batch()).hex())
    (entry,) = events[0]["body"]["topic_data"][0]["partition_data"][0]["records"]["entries"]
    assert entry["records"][0]["value"] == base64.b64encode(b"v1").decode()


def test_legacy_message_sets_and_a_partial_tail() -> None:
    message_set = build_message_set([(b"k", b"a"), (None, b"b")], magic=1, base_offset=5)
    status, events = run("--records", _produce(2, message_set + message_set[:20]).hex())
    assert status == 0
    records = events[0]["body"]["topic_data"][0]["partition_data"][0]["records"]
    assert [(e["base_offset"], e["magic"], e["count"]) for e in records["entries"]] == [(5, 1, 1), (6, 1, 1)]
    assert [r["value"] for e in records["entries"] for r in e["records"]] == [b"a".hex(), b"b".hex()]
    assert records["partial_tail_bytes"] == 20


def test_a_corrupt_batch_is_an_error_inside_the_summary() -> None:
    batch = bytearray(_batch())
    batch[-1] ^= 0xFF
    status, events = run(_produce(8, bytes(batch)).hex())
    assert status == 0  # the request itself decodes; its record set is what is broken
    (entry,) = events[0]["body"]["topic_data"][0]["partition_data"][0]["records"]["entries"]
    assert entry["error"] == {"type": "CorruptRecordError", "message": "CRC-32C mismatch"}


def test_undecodable_frames_name_kprotos_error() -> None:
    broken = kproto.add_prefix(metadata_request(6)[4:-1])  # the last field is missing
    unknown = kproto.add_prefix(b"\x00\x03\x00\x63\x00\x00\x00\x01\xff\xff")  # Metadata v99
    status, events = run((broken + unknown + metadata_request(8)[:10]).hex())
    assert status == 1
    assert [e["error"]["type"] for e in events] == [
        "DecodeError",
        "UnsupportedVersionError",
        "TruncatedFrame",
    ]
    assert events[0]["api"] == "Metadata" and events[0]["correlation_id"] == 6
    assert events[0]["error"]["api_key"] == 3 and events[0]["error"]["version"] == 4
    assert bytes.fromhex(events[0]["frame_data"]) == broken
    assert "allow_auto_topic_creation" in events[0]["error"]["where"]
    assert events[1]["version"] == 99 and events[1]["error"]["version"] == 99
    assert events[2]["skipped_bytes"] == 10


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("not-hex-and-no-file")[0] == 2
    assert "neither a file nor hex" in capsys.readouterr().err
    assert run("--response", "Nonsense:1", "00")[0] == 2
    assert run("--response", "Metadata", "00")[0] == 2


def test_python_dash_m_kproto_help_and_a_frame() -> None:
    """The real entry point: --help explains with examples, and a frame goes through a pipe."""
    help_text = subprocess.run(
        [sys.executable, "-m", "kproto", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert (
        "examples:" in help_text and "python -m kproto pcap" in help_text and "UnmatchedResponse" in help_text
    )
    done = subprocess.run(
        [sys.executable, "-m", "kproto", "frame", "-"],
        cwd=ROOT,
        input=metadata_request(5).hex().encode(),
        capture_output=True,
        check=True,
    )
    assert json.loads(done.stdout)["correlation_id"] == 5


def test_the_examples_in_the_readme_and_the_help_are_true() -> None:
    """The README's `python -m kproto frame HEX` prints its first JSON line; the help's hex frames decode."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Inspecting traffic") :]
    command = re.search(r"python -m kproto frame ([0-9a-f]+)", section)
    shown = re.search(r"```json\n(.*?)\n", section)
    assert command is not None and shown is not None
    status, events = run(command.group(1))
    assert status == 0 and events == [json.loads(shown.group(1))]
    for parser_args in (["--help"], ["frame", "--help"]):
        help_text = subprocess.run(
            [sys.executable, "-m", "kproto", *parser_args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hex_frame in re.findall(r"python -m kproto frame ([0-9a-f]{16,})", help_text):
            assert run(hex_frame)[0] == 0, hex_frame


def test_uuid_fields_print_as_kafka_prints_them() -> None:
    """Kafka's text form of a UUID (topic ids): URL-safe base64 of the 16 bytes, unpadded."""
    from kproto.inspect.render import Options, to_json
    from kproto.primitives import Uuid
    from kproto.schema import Array, Bytes, Field

    topic_id = bytes.fromhex("fb0a8a4b7bd24d6c9c3e6e0c6ef1e4ff")
    declared = [Field("topics", Array([Field("topic_id", Uuid), Field("data", Bytes)]))]
    value = {"topics": [{"topic_id": topic_id, "data": b"\x01"}]}
    assert to_json(value, Options(), declared) == {
        "topics": [{"topic_id": "-wqKS3vSTWycPm4MbvHk_w", "data": "01"}]
    }
