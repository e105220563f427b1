"""``hmb configs``, ``hmb groups``, ``hmb topics alter|create --config`` and
``hmb records delete`` against the real broker: output, JSON and effect.

Commands run through ``main(argv)`` against a broker in this process; one
runs as a real subprocess so the exit code and bytes are what a user gets.
Commands whose API hmb does not serve yet are skipped by ``needs_hmb``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from admin_support import consume_and_commit, needs_hmb, produce_n
from test_cli_tools import hmb, ok, subparser

from hmb_client.admin import Admin
from hmb_client.admin_types import ConfigResource
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from hmb_cmd import main
from kproto import ApiKey

TP0 = TopicPartition("events", 0)

NEW_SUBCOMMANDS = [
    ["configs", "describe"],
    ["configs", "alter"],
    ["groups", "list"],
    ["groups", "describe"],
    ["groups", "reset-offsets"],
    ["groups", "delete"],
    ["groups", "delete-offsets"],
    ["topics", "alter"],
    ["topics", "create"],
    ["records", "delete"],
]


@pytest.mark.parametrize("path", NEW_SUBCOMMANDS, ids=" ".join)
def test_help_explains_every_option_with_an_example(
    path: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "  hmb " + " ".join(path) in text.split("\nexample:\n", 1)[1]
    assert "--json" in text
    for action in subparser(path)._actions:
        assert action.help, f"{action.option_strings or action.dest} of hmb {' '.join(path)} has no help"
        for option in action.option_strings:
            assert option in text


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- configs


def test_configs_describe_and_alter_a_topic(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    code, out, _ = run(capsys, "topics", "create", "orders", "--config", "retention.ms=60000", *bs)
    assert code == 0 and "Created topic orders" in out
    code, out, _ = run(
        capsys, "configs", "describe", "--entity-type", "topics", "--entity-name", "orders", *bs
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Dynamic configs for topic orders are:"
    assert len(lines) == 2 and lines[1].startswith("  retention.ms=60000 sensitive=false synonyms={")
    assert "DEFAULT_CONFIG:log.retention.ms=" in lines[1]

    args = ("configs", "alter", "--entity-type", "topics", "--entity-name", "orders", *bs)
    code, out, _ = run(capsys, *args, "--add-config", "flush.ms=100,cleanup.policy=[compact,delete]")
    assert (code, out) == (0, "Completed updating config for topic orders.\n")
    code, out, _ = run(capsys, *args, "--delete-config", "retention.ms")
    assert code == 0
    with Admin(in_process_broker.bootstrap) as admin:
        entries = admin.describe_configs([ConfigResource.topic("orders")])[ConfigResource.topic("orders")]
    assert entries["flush.ms"].value == "100"
    assert entries["cleanup.policy"].value == "compact,delete"
    assert entries["retention.ms"].source.name != "DYNAMIC_TOPIC_CONFIG"

    code, out, _ = run(capsys, "configs", "describe", "--topic", "orders", "--all", "--json", *bs)
    (doc,) = json.loads(out)
    by_name = {c["name"]: c for c in doc["configs"]}
    assert (doc["entity_type"], doc["entity_name"]) == ("topics", "orders")
    assert by_name["flush.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert by_name["segment.bytes"]["source"] != "DYNAMIC_TOPIC_CONFIG"  # --all: defaults too
    assert {"value", "read_only", "sensitive", "synonyms"} <= set(by_name["flush.ms"])


def test_configs_alter_the_broker_default(in_process_broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    code, out, _ = run(
        capsys,
        "configs",
        "alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--add-config",
        "log.retention.ms=3600000",
        "--json",
        *bs,
    )
    assert code == 0
    assert json.loads(out) == {
        "entity_type": "brokers",
        "entity_name": "",
        "set": {"log.retention.ms": "3600000"},
        "deleted": [],
    }
    code, out, _ = run(capsys, "configs", "describe", "--entity-type", "brokers", "--entity-default", *bs)
    assert out.splitlines()[0] == "Dynamic configs for the default broker configs are:"
    assert any(line.startswith("  log.retention.ms=3600000 ") for line in out.splitlines())


def test_configs_errors_are_one_line_saying_what_to_do(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    produce_n(in_process_broker.bootstrap, "events", 1)
    code, _, err = run(
        capsys, "configs", "alter", "--topic", "missing", "--add-config", "retention.ms=1", *bs
    )
    assert code == 1 and err == "hmb configs alter: topic 'missing' does not exist; see 'hmb topics list'\n"
    code, _, err = run(
        capsys, "configs", "alter", "--topic", "events", "--add-config", "retention.ms=soon", *bs
    )
    assert code == 1 and len(err.splitlines()) == 1 and "INVALID_CONFIG" in err and "Traceback" not in err
    code, _, err = run(capsys, "configs", "alter", "--topic", "events", "--add-config", "retention.ms", *bs)
    assert code == 2 and "--add-config expects NAME=VALUE" in err
    code, _, err = run(capsys, "configs", "describe", "--topic", "missing", *bs)
    assert (
        code == 1 and err == "hmb configs describe: topic 'missing' does not exist; see 'hmb topics list'\n"
    )
    code, _, err = run(capsys, "configs", "describe", *bs)
    assert code == 2 and "--entity-type topics|brokers" in err
    code, _, err = run(capsys, "configs", "alter", "--topic", "events", *bs)
    assert code == 2 and "nothing to change" in err


# ---------------------------------------------------------------- groups: list, describe and lag


def test_groups_describe_shows_offsets_log_end_and_lag(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    produce_n(in_process_broker.bootstrap, "events", 10)
    consumer = consume_and_commit(in_process_broker.bootstrap, "events", "readers", 4)
    try:
        code, out, _ = run(capsys, "groups", "describe", "--group", "readers", *bs)
        assert code == 0
        header, row = (line.split() for line in out.splitlines())
        assert header == [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
        ]
        assert row[:6] == ["readers", "events", "0", "4", "10", "6"]
        assert row[8] == "readers-client"

        produce_n(in_process_broker.bootstrap, "events", 5)  # the lag follows the log end
        code, out, _ = run(capsys, "groups", "describe", "--group", "readers", "--json", *bs)
        (doc,) = json.loads(out)
        assert doc["state"] == "Stable"
        assert [(o["current_offset"], o["log_end_offset"], o["lag"]) for o in doc["offsets"]] == [(4, 15, 11)]
        assert doc["members"][0]["assignment"] == [{"topic": "events", "partition": 0}]

        code, out, _ = run(capsys, "groups", "describe", "--group", "readers", "--members", "--verbose", *bs)
        row = out.splitlines()[1].split()
        assert row[0] == "readers" and row[-2:] == ["1", "events:0"]
        code, out, _ = run(capsys, "groups", "describe", "--group", "readers", "--state", *bs)
        assert out.splitlines()[1].split()[-2:] == ["Stable", "1"]

        code, out, _ = run(capsys, "groups", "list", *bs)
        assert out == "readers\n"
        code, out, _ = run(capsys, "groups", "list", "--state", *bs)
        assert [line.split() for line in out.splitlines()] == [["GROUP", "STATE"], ["readers", "Stable"]]
        code, out, _ = run(capsys, "groups", "list", "--state", "Empty", "--json", *bs)
        assert json.loads(out) == []
    finally:
        consumer.close(autocommit=False)


def test_groups_describe_an_empty_group_and_a_missing_one(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    produce_n(in_process_broker.bootstrap, "events", 3)
    with Admin(in_process_broker.bootstrap) as admin:
        admin.alter_consumer_group_offsets("parked", {TP0: 1})
    code, out, err = run(capsys, "groups", "describe", "--group", "parked", *bs)
    assert code == 0 and "Consumer group 'parked' has no active members." in err
    assert out.splitlines()[1].split() == ["parked", "events", "0", "1", "3", "2", "-", "-", "-"]
    code, out, _ = run(capsys, "groups", "describe", "--group", "ghost", *bs)
    assert out == "Consumer group 'ghost' does not exist.\n"


# ---------------------------------------------------------------- groups: reset-offsets


def committed(bootstrap: str, group: str) -> dict[TopicPartition, OffsetAndMetadata]:
    with Admin(bootstrap) as admin:
        return admin.list_consumer_group_offsets(group)


def test_reset_offsets_dry_run_then_execute(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    b = in_process_broker.bootstrap
    bs = ("--bootstrap-server", b)
    produce_n(b, "events", 10, first_ts=1_700_000_000_000)
    consumer = consume_and_commit(b, "events", "readers", 4)
    reset = ("groups", "reset-offsets", "--group", "readers", "--topic", "events", *bs)
    try:
        code, _, err = run(capsys, *reset, "--to-earliest", "--execute")
        assert code == 1 and "is inactive, but its state is Stable; stop its consumers first" in err
    finally:
        consumer.close(autocommit=False)
    assert committed(b, "readers") == {TP0: OffsetAndMetadata(4, "")}

    code, out, err = run(capsys, *reset, "--to-earliest")
    assert code == 0 and out.splitlines()[1].split() == ["readers", "events", "0", "0"]
    assert "add --execute" in err
    assert committed(b, "readers")[TP0].offset == 4  # a dry run changes nothing
    code, out, _ = run(capsys, *reset, "--to-earliest", "--dry-run", "--json")
    assert json.loads(out) == {
        "executed": False,
        "offsets": [{"group": "readers", "topic": "events", "partition": 0, "new_offset": 0}],
    }
    assert committed(b, "readers")[TP0].offset == 4

    expected = [
        (("--to-earliest",), 0),
        (("--shift-by", "3"), 3),
        (("--shift-by", "-10"), 0),  # clamped to the earliest offset
        (("--to-latest",), 10),
        (("--to-offset", "100"), 10),  # clamped to the log end
        (("--to-offset", "5"), 5),
        (("--to-current",), 5),
        (("--to-datetime", "2023-11-14T22:13:20.007Z"), 7),  # 1_700_000_000_007 ms
        (("--to-datetime", "2030-01-01T00:00:00+00:00"), 10),  # after every record: the log end
    ]
    for flags, offset in expected:
        code, out, _ = run(capsys, *reset, *flags, "--execute")
        assert code == 0, flags
        assert out.splitlines()[1].split()[-1] == str(offset), flags
        assert committed(b, "readers")[TP0].offset == offset, flags


def test_reset_offsets_all_topics_and_errors(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    b = in_process_broker.bootstrap
    bs = ("--bootstrap-server", b)
    produce_n(b, "events", 6)
    produce_n(b, "other", 4)
    with Admin(b) as admin:
        admin.alter_consumer_group_offsets("g", {TP0: 2, TopicPartition("other", 0): 1})
    code, out, _ = run(
        capsys, "groups", "reset-offsets", "--group", "g", "--all-topics", "--to-latest", "--execute", *bs
    )
    assert code == 0
    assert [line.split()[1:] for line in out.splitlines()[1:]] == [["events", "0", "6"], ["other", "0", "4"]]
    assert {tp.topic: o.offset for tp, o in committed(b, "g").items()} == {"events": 6, "other": 4}

    code, _, err = run(
        capsys, "groups", "reset-offsets", "--group", "fresh", "--topic", "events", "--shift-by", "1", *bs
    )
    assert code == 1 and "has no committed offset for events-0" in err
    code, _, err = run(
        capsys, "groups", "reset-offsets", "--group", "g", "--topic", "nope", "--to-earliest", *bs
    )
    assert code == 1 and "topic 'nope' does not exist" in err
    code, _, err = run(
        capsys, "groups", "reset-offsets", "--group", "g", "--topic", "events:3", "--to-earliest", *bs
    )
    assert code == 2 and "has partitions 0-0" in err
    code, _, err = run(
        capsys, "groups", "reset-offsets", "--group", "g", "--all-topics", "--to-datetime", "yesterday", *bs
    )
    assert code == 2 and "--to-datetime expects" in err


# ---------------------------------------------------------------- groups: delete, delete-offsets


@needs_hmb(ApiKey.DELETE_GROUPS)
def test_groups_delete(in_process_broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    b = in_process_broker.bootstrap
    produce_n(b, "events", 2)
    with Admin(b) as admin:
        admin.alter_consumer_group_offsets("old", {TP0: 1})
    code, out, _ = run(capsys, "groups", "delete", "--group", "old", "--bootstrap-server", b)
    assert (code, out) == (0, "Deletion of requested consumer groups ('old') was successful.\n")
    assert committed(b, "old") == {}
    code, _, err = run(capsys, "groups", "delete", "--group", "old", "--bootstrap-server", b)
    assert code == 1 and "GROUP_ID_NOT_FOUND" in err


@needs_hmb(ApiKey.OFFSET_DELETE)
def test_groups_delete_offsets(in_process_broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    b = in_process_broker.bootstrap
    produce_n(b, "events", 2)
    produce_n(b, "other", 2)
    with Admin(b) as admin:
        admin.alter_consumer_group_offsets("g", {TP0: 1, TopicPartition("other", 0): 2})
    code, out, _ = run(
        capsys,
        "groups",
        "delete-offsets",
        "--group",
        "g",
        "--topic",
        "events",
        "--json",
        "--bootstrap-server",
        b,
    )
    assert code == 0 and json.loads(out) == {"group": "g", "deleted": [{"topic": "events", "partition": 0}]}
    assert committed(b, "g") == {TopicPartition("other", 0): OffsetAndMetadata(2, "")}


# ---------------------------------------------------------------- topics alter, records delete


def test_topics_alter_refuses_to_shrink_before_asking(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    code, out, _ = run(capsys, "topics", "create", "wide", "--partitions", "3", "--json", *bs)
    assert json.loads(out) == {"topic": "wide", "partitions": 3, "configs": {}}
    code, _, err = run(capsys, "topics", "alter", "wide", "--partitions", "2", *bs)
    assert code == 1 and "cannot shrink; give --partitions 3 or more" in err
    code, out, _ = run(capsys, "topics", "alter", "wide", "--partitions", "3", *bs)
    assert (code, out) == (0, "Topic wide already has 3 partitions.\n")
    code, _, err = run(capsys, "topics", "alter", "nope", "--partitions", "3", *bs)
    assert code == 1 and "topic 'nope' does not exist" in err


@needs_hmb(ApiKey.CREATE_PARTITIONS)
def test_topics_alter_adds_partitions(in_process_broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    run(capsys, "topics", "create", "wide", "--partitions", "2", *bs)
    code, out, _ = run(capsys, "topics", "alter", "wide", "--partitions", "5", *bs)
    assert (code, out) == (0, "Topic wide now has 5 partitions (was 2).\n")
    with Admin(in_process_broker.bootstrap) as admin:
        assert len(admin.describe_topic("wide").partitions) == 5


def write_json(tmp_path: Path, document: object) -> str:
    path = tmp_path / "delete.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_records_delete_rejects_bad_files(
    in_process_broker: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bs = ("--bootstrap-server", in_process_broker.bootstrap)
    cases = [
        ({"partitions": []}, "needs"),
        ({"partitions": [{"topic": "t", "partition": 0}]}, "needs topic, partition and offset"),
        ({"partitions": [{"topic": "t", "partition": 0, "offset": 1}] * 2}, "listed twice"),
    ]
    for document, message in cases:
        code, _, err = run(
            capsys, "records", "delete", "--offset-json-file", write_json(tmp_path, document), *bs
        )
        assert code == 2 and message in err, document
    code, _, err = run(capsys, "records", "delete", "--offset-json-file", str(tmp_path / "none.json"), *bs)
    assert code == 2 and "cannot read" in err
    good = {"partitions": [{"topic": "missing", "partition": 0, "offset": 1}], "version": 1}
    code, _, err = run(capsys, "records", "delete", "--offset-json-file", write_json(tmp_path, good), *bs)
    assert code == 1 and "topic 'missing' does not exist" in err


@needs_hmb(ApiKey.DELETE_RECORDS)
def test_records_delete_moves_the_log_start(in_process_broker: Any, tmp_path: Path) -> None:
    b = in_process_broker.bootstrap
    produce_n(b, "events", 10)
    document = {"partitions": [{"topic": "events", "partition": 0, "offset": 7}], "version": 1}
    result = ok(
        hmb(
            "records", "delete", "--offset-json-file", write_json(tmp_path, document), "--bootstrap-server", b
        )
    )
    assert (
        result.stdout.decode()
        == "Records delete operation completed:\npartition: events-0\tlow_watermark: 7\n"
    )
    with Admin(b) as admin:
        assert admin.describe_topic("events").partitions[0].earliest_offset == 7


def test_groups_list_json_as_a_process(in_process_broker: Any) -> None:
    b = in_process_broker.bootstrap
    produce_n(b, "events", 2)
    with Admin(b) as admin:
        admin.alter_consumer_group_offsets("proc", {TP0: 1})
    result = ok(hmb("groups", "list", "--state", "--json", "--bootstrap-server", b))
    assert json.loads(result.stdout) == [{"group": "proc", "protocol_type": "", "state": "Empty"}]
