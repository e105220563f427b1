"""Write kproto's message modules from Kafka's JSON message specs.

Usage::

    python scripts/gen_kproto_messages.py SPEC_DIR [SPEC_DIR ...]
    python scripts/gen_kproto_messages.py --readme README.md

Each SPEC_DIR holds Kafka's ``*Request.json``/``*Response.json`` files (as in
``clients/src/main/resources/common/message`` of apache/kafka, or the copy
kafka-python ships); when a message is in several directories the first one
wins, so put the newest first.  Only the keys in :data:`KEYS` are written:
the APIs Kafka 4.x serves to clients and tools on a broker listener.  The
JSON files are inputs, never committed; the modules written are our own
declarations of those public protocol facts.

``--readme`` rewrites the "What is covered" table of the README from the
registries (kproto declares, hmb serves), and hmb's handler index
(``hmb/api/handler_index.py``) from the handlers' ``@handles`` declarations.

Rules of this script:

* Field names are Kafka's in snake_case, except the few in :data:`RENAMES`
  that kproto named before this script existed (the broker and client build
  dicts with them).
* A key kproto declared before keeps its lowest version (:data:`LOWEST`):
  Kafka 4 dropped versions that old clients still send, and the specs still
  describe their fields.
* A module's docstring is the purpose paragraph from :data:`PURPOSE` plus a
  version history derived from the field ranges, so it cannot drift.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kproto" / "messages"

# api key -> what the key is for, in our words (the version history is derived).
PURPOSE: dict[int, str] = {
    0: """Append record sets to partitions.  With ``acks == 0`` the broker sends
no response at all.  ``records`` stays raw bytes: the record formats live in
:mod:`kproto.records`.  v1 and v2 have v0's request layout (v2 announces
magic 1); v3 brings RecordBatch (magic 2); v4-v7 change only the errors and
codecs allowed.  From v13 topics are named by id (KIP-516).""",
    1: """Read record sets from partitions, with long-poll.  ``max_wait_ms`` and
``min_bytes`` make the broker hold the request until enough data arrived;
``partition_max_bytes`` bounds each partition's record set, which may
therefore end with a partial message that readers must skip.  v4 brings
the isolation level (magic 2), v7 incremental fetch sessions, v13 topic
ids instead of names.  ``records``: send b'', never null (librdkafka
rejects -1).""",
    2: """Offsets by time ("Offsets" in Kafka 0.8).  ``timestamp`` -1 asks for
the latest offset (the next one to be written), -2 for the earliest; v0
answers up to ``max_num_offsets`` segment-start offsets at or before the
time, newest first; from v1 one offset and its timestamp.""",
    3: """Brokers, topics, partitions and their leaders.  In v0 an empty
``topics`` list means "all topics"; from v1 that is a null list (and an
empty one means "no topics").  Asking for an unknown topic may auto-create
it when the broker allows that (v4+: only if the client also allows it).""",
    7: """A broker about to stop asks the controller to move the leadership of
every partition it leads to another in-sync replica (ZooKeeper mode,
inter-broker).  The answer lists the partitions it still leads; the broker
asks again after a back-off.  v0 is sent with request header v0 (no client
id).""",
    8: """Store a consumer group's positions.  v0 stored offsets in ZooKeeper,
v1 in Kafka with a per-partition commit timestamp (-1: broker time); v2-v4
replace it by a request-wide retention time.  Kafka now calls
``generation_id`` "GenerationIdOrMemberEpoch" (the member epoch of the
KIP-848 protocol from v9); kproto keeps the older name.""",
    9: """Read a consumer group's committed positions; -1 means "nothing
committed".  v2 allows a null topic list ("all topics of the group");
from v8 several groups are asked at once.""",
    10: """Which broker coordinates a consumer group (``key_type`` 0) or a
transactional id (1): on a single broker, always itself.  v4 asks for
several keys at once (KIP-699).""",
    11: """Become a member of a classic consumer group.  Every member sends the
protocols (assignors) it supports with its subscription as opaque metadata;
the coordinator picks one protocol and a leader, and answers the leader
with all members' metadata.  From v4 a first join with an empty member id
is answered MEMBER_ID_REQUIRED (79) with an id to join with.""",
    12: """A classic group member is alive; REBALANCE_IN_PROGRESS (27) in the
answer tells it to join again.""",
    13: """Members leave a classic group without waiting for a session timeout;
from v3 in a batch, answered per member.""",
    14: """Hand out the leader's partition assignment: the leader sends every
member's assignment; every member (leader included) receives its own.""",
    15: """State, protocol and members of classic groups.  ``protocol_data`` is
the chosen assignor's name; member metadata and assignments are the opaque
bytes exchanged in JoinGroup/SyncGroup.""",
    16: """The groups a broker coordinates, filtered by state (v4) and type (v5).""",
    17: """Choose the SASL mechanism before authenticating; v1 moves the tokens
into SaslAuthenticate requests.""",
    18: """Which API keys and versions the broker serves; modern clients send it
first.  A request version the broker does not know is answered with error
35 (UNSUPPORTED_VERSION) in the *v0 body layout*, listing what is
supported, and the response header is always v0 (never flexible) so that
any client can read that answer.  Tagged feature fields are written only
when they differ from their defaults: librdkafka 2.0 fails on tagged
fields it did not expect.""",
    19: """Create topics with a partition count or an explicit replica
assignment, and per-topic configs.  ``num_partitions``/``replication_factor``
are -1 when ``assignments`` is given (from v4 also to mean "the broker's
default").""",
    20: """Delete topics by name (from v6 also by topic id).""",
    21: """Delete records before an offset: moves a partition's log start offset.""",
    22: """A producer id and epoch for idempotent and transactional writes.  A null
transactional id asks for an idempotent-only producer; from v3 the client
sends its current id and epoch (-1/-1 for a new producer) so that the
epoch can be bumped (KIP-360).""",
    23: """The end offset of a leader epoch: how a consumer (or follower) finds
where its log diverged after a leader change (KIP-320).""",
    24: """Add partitions to an ongoing transaction; from v4 a broker may batch
several transactions (then the request is inter-broker).""",
    25: """Add a consumer group's offsets to an ongoing transaction.""",
    26: """Commit or abort a transaction.""",
    27: """Write transaction markers into partitions: sent by a transaction
coordinator to partition leaders (inter-broker, declared because tools
decode it).""",
    28: """Commit consumer offsets as part of a transaction.""",
    29: """List ACLs matching a filter.""",
    30: """Create ACLs.""",
    31: """Delete ACLs matching filters.""",
    32: """Describe the configs of topics, brokers and other resources.""",
    33: """Replace the configs of resources (superseded by IncrementalAlterConfigs).""",
    34: """Move replicas between a broker's log directories.""",
    35: """The log directories of a broker, with partition sizes and lags.""",
    36: """One SASL authentication round trip (the mechanism's tokens).""",
    37: """Add partitions to existing topics.""",
    38: """Create a delegation token for the authenticated principal.""",
    39: """Extend a delegation token's expiry time.""",
    40: """Expire (or shorten) a delegation token.""",
    41: """List delegation tokens by owner.""",
    42: """Delete classic consumer groups.""",
    43: """Elect preferred or unclean partition leaders.""",
    44: """Change individual config entries (set, delete, append, subtract).""",
    45: """Start or cancel partition replica reassignments.""",
    46: """List ongoing partition reassignments.""",
    47: """Delete a group's committed offsets for some partitions.""",
    48: """Describe client quotas matching a filter.""",
    49: """Alter client quotas.""",
    50: """Describe users' SCRAM credentials (mechanisms and iterations).""",
    51: """Create or delete users' SCRAM credentials.""",
    55: """The state of the KRaft metadata quorum (served by brokers to admin tools).""",
    57: """Update finalized feature versions of the cluster.""",
    60: """The cluster's brokers, controller and id, for admin clients (KIP-700).""",
    61: """Active producers of partitions (KIP-664).""",
    64: """Remove a broker's registration from the cluster.""",
    65: """Describe transactions by transactional id.""",
    66: """List transactions, filtered by state, producer id and duration.""",
    68: """The heartbeat of the consumer-group protocol of KIP-848: join, leave and
receive assignments in one call.""",
    69: """Describe consumer groups of the KIP-848 protocol.""",
    71: """Which client metrics a client should push (KIP-714).""",
    72: """Push client metrics (KIP-714).""",
    74: """List config resources by type (v0 was ListClientMetricsResources).""",
    75: """Topic and partition metadata, paginated (KIP-966).""",
    80: """Add a voter to the KRaft quorum (KIP-853); brokers forward it.""",
    81: """Remove a voter from the KRaft quorum (KIP-853); brokers forward it.""",
}

KEYS = frozenset(PURPOSE)

# api key -> constants a module defines beside its declarations.
CONSTANTS: dict[int, str] = {
    2: (
        "LATEST_TIMESTAMP = -1  # the next offset to be written\n"
        "EARLIEST_TIMESTAMP = -2  # the log start offset\n"
    ),
}

# Versions kproto declared before Kafka 4 dropped them: api key -> lowest version.
LOWEST: dict[int, int] = {k: 0 for k in (0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 22)}

# (message name, Kafka's field name) -> kproto's field name.
RENAMES: dict[tuple[str, str], str] = {
    ("OffsetCommitRequest", "GenerationIdOrMemberEpoch"): "generation_id",
}

_PRIMITIVES = {
    "bool": "Boolean",
    "int8": "Int8",
    "int16": "Int16",
    "uint16": "UInt16",
    "int32": "Int32",
    "uint32": "UInt32",
    "int64": "Int64",
    "float64": "Float64",
    "uuid": "Uuid",
}
_MARKERS = {"string": "String", "bytes": "Bytes", "records": "Records"}


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def load_spec(path: Path) -> dict[str, Any]:
    text = re.sub(r"(?m)^\s*//.*\n?", "", path.read_text())
    spec: dict[str, Any] = json.loads(text)
    common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}

    def resolve(fields: list[dict[str, Any]]) -> None:
        for f in fields:
            inner = f["type"][2:] if f["type"].startswith("[]") else f["type"]
            if inner in common and "fields" not in f:
                f["fields"] = common[inner]
            resolve(f.get("fields", []))

    resolve(spec["fields"])
    return spec


# --------------------------------------------------------------------------
# Version ranges
# --------------------------------------------------------------------------


def parse_range(spec: str | None, top: int) -> tuple[int, int] | None:
    """``"3+"`` -> (3, top); ``"none"``/None -> None."""
    if spec is None or spec == "none":
        return None
    m = re.fullmatch(r"(\d+)(\+|-(\d+))?", spec.strip())
    assert m, spec
    low = int(m.group(1))
    high = top if m.group(2) == "+" else int(m.group(3) or low)
    return (low, high) if low <= high else None


def intersect(a: str, b: str | None) -> str:
    """The intersection of two Kafka ranges, written as Kafka would."""
    if b is None:
        return a
    ra, rb = parse_range(a, 1 << 20), parse_range(b, 1 << 20)
    if ra is None or rb is None:
        return "none"
    low, high = max(ra[0], rb[0]), min(ra[1], rb[1])
    if low > high:
        return "none"
    if high == 1 << 20:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


# --------------------------------------------------------------------------
# Emitting declarations
# --------------------------------------------------------------------------


def _default(f: dict[str, Any]) -> str | None:
    """The ``default=`` argument for ``f``, or None when Kafka's zero value applies."""
    t = f["type"]
    raw = f.get("default")
    if t.startswith("[]"):
        return "None" if raw == "null" else None
    if raw is None or raw == "":
        return None
    if raw == "null":
        return "None"
    if t == "bool":
        return None if str(raw).lower() == "false" else "True"
    if t in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        value = int(str(raw), 0)
        return None if value == 0 else str(value)
    if t == "float64":
        return None if float(raw) == 0 else repr(float(raw))
    if t == "string":
        return _q(str(raw))
    raise ValueError(f"unexpected default {raw!r} for {f['name']}")


def _q(text: str) -> str:
    """A string literal in the repository's (double-quoted) style."""
    return json.dumps(text)


class Emitter:
    def __init__(self, message: str) -> None:
        self.message = message
        self.imports: set[str] = set()
        self.schema: set[str] = {"Field", "Message"}

    def type_expr(self, f: dict[str, Any], indent: str) -> str:
        t = f["type"]
        if t.startswith("[]"):
            self.schema.add("Array")
            inner = t[2:]
            if "fields" in f:
                return f"Array({self.fields_expr(f['fields'], indent)})"
            return f"Array({self.scalar(inner)})"
        if "fields" in f:
            self.schema.add("Nested")
            return f"Nested({self.fields_expr(f['fields'], indent)})"
        return self.scalar(t)

    def scalar(self, t: str) -> str:
        if t in _MARKERS:
            self.schema.add(_MARKERS[t])
            return _MARKERS[t]
        self.imports.add(_PRIMITIVES[t])
        return _PRIMITIVES[t]

    def field(self, f: dict[str, Any], indent: str) -> str:
        name = RENAMES.get((self.message, f["name"]), snake(f["name"]))
        args = [_q(name), self.type_expr(f, indent)]
        versions = f["versions"]
        if "tag" in f:
            versions = intersect(versions, f.get("taggedVersions"))
        if versions != "0+":
            args.append(f"versions={_q(versions)}")
        nullable = f.get("nullableVersions")
        if nullable and nullable != "none":
            args.append(f"nullable={_q(nullable)}")
        if "tag" in f:
            args.append(f"tag={f['tag']}")
        default = _default(f)
        if default is not None:
            args.append(f"default={default}")
        if f.get("flexibleVersions"):
            args.append(f"flexible={_q(f['flexibleVersions'])}")
        return f"{indent}Field({', '.join(args)}),"

    def fields_expr(self, fields: list[dict[str, Any]], indent: str) -> str:
        inner = indent + "    "
        lines = [self.field(f, inner) for f in fields]
        return "[\n" + "\n".join(lines) + f"\n{indent}]"


def message_expr(spec: dict[str, Any], emitter: Emitter, low: int | None) -> str:
    valid = parse_range(spec["validVersions"], 0)
    assert valid is not None
    lo = valid[0] if low is None else min(low, valid[0])
    hi = valid[1]
    valid_s = str(lo) if lo == hi else f"{lo}-{hi}"
    flex = spec.get("flexibleVersions", "none")
    kind = "REQUEST" if spec["type"] == "request" else "RESPONSE"
    head = f'{kind} = Message("{spec["name"]}", api_key={spec["apiKey"]}, valid="{valid_s}"'
    if flex != "none":
        head += f', flexible="{flex}"'
    return f"{head}, fields={emitter.fields_expr(spec['fields'], '')})\n"


# --------------------------------------------------------------------------
# The version history in the docstring
# --------------------------------------------------------------------------


def _walk(
    fields: list[dict[str, Any]], prefix: str, message: str, parents: tuple[str, ...] = ()
) -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    """Every field with its dotted name and its ancestors' version ranges."""
    out = []
    for f in fields:
        name = prefix + RENAMES.get((message, f["name"]), snake(f["name"]))
        out.append((name, f, parents))
        out.extend(_walk(f.get("fields", []), name + ".", message, (*parents, f["versions"])))
    return out


def _in(spec: str, version: int, top: int) -> bool:
    r = parse_range(spec, top)
    return r is not None and r[0] <= version <= r[1]


def history(request: dict[str, Any], response: dict[str, Any], lo: int, hi: int) -> str:
    """One line per version that changes something, derived from the field ranges."""
    lines = []
    flex = parse_range(request.get("flexibleVersions"), hi)
    for v in range(lo + 1, hi + 1):
        changes = []
        for spec, side in ((request, "request"), (response, "response")):
            added, removed = [], []
            for name, f, parents in _walk(spec["fields"], "", spec["name"]):
                if not all(_in(p, v - 1, hi) and _in(p, v, hi) for p in parents):
                    continue  # a new or dropped parent says it all
                had, has = _in(f["versions"], v - 1, hi), _in(f["versions"], v, hi)
                tagged = " (tagged)" if "tag" in f else ""
                if has and not had:
                    added.append(f"``{name}``{tagged}")
                elif had and not has:
                    removed.append(f"``{name}``")
            if added:
                changes.append(f"{side} adds {', '.join(added)}")
            if removed:
                changes.append(f"{side} drops {', '.join(removed)}")
        if flex and v == flex[0]:
            changes.insert(0, "flexible (compact strings and arrays, tagged fields)")
        lines.append(f"v{v}: " + ("; ".join(changes) if changes else "same layout (new semantics or errors)"))
    if flex and flex[0] == lo:
        lines.insert(0, f"v{lo}: flexible from the start")
    return "\n".join(lines)


def _wrap(text: str) -> str:
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > 76:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    out.append(line)
    return "\n".join(out)


def _natural(name: str) -> list[Any]:
    """Int8 before Int16, as the import sorter wants."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def module_text(request: dict[str, Any], response: dict[str, Any]) -> str:
    key = request["apiKey"]
    low = LOWEST.get(key)
    emitters = (Emitter(request["name"]), Emitter(response["name"]))
    bodies = [message_expr(s, e, low) for s, e in zip((request, response), emitters, strict=True)]
    valid = parse_range(request["validVersions"], 0)
    assert valid is not None
    lo = valid[0] if low is None else min(low, valid[0])
    api = request["name"].removesuffix("Request")
    purpose = "\n".join(_wrap(p) for p in PURPOSE[key].split("\n\n"))
    span = f"version {lo}" if lo == valid[1] else f"versions {lo}-{valid[1]}"
    doc = (
        f'"""{api} (api key {key}), {span}.\n\n{purpose}\n\n'
        f"What each version changes (derived from the field ranges):\n\n"
        + "\n".join(f"* {line}" for line in history(request, response, lo, valid[1]).splitlines())
        + '\n"""\n'
    )
    imports = sorted(emitters[0].imports | emitters[1].imports, key=_natural)
    schema = sorted(emitters[0].schema | emitters[1].schema)
    head = (
        "# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:\n"
        "# change the script's tables and run it again rather than editing this file.\n"
        "\nfrom __future__ import annotations\n\n"
    )
    if imports:
        head += f"from kproto.primitives import {', '.join(imports)}\n"
    head += f"from kproto.schema import {', '.join(schema)}\n\n"
    if key in CONSTANTS:
        head += CONSTANTS[key] + "\n"
    return doc + "\n" + head + bodies[0] + "\n" + bodies[1]


def generate(dirs: list[Path]) -> list[str]:
    found: dict[int, Path] = {}  # api key -> its request spec, first directory first
    for d in dirs:
        for path in sorted(d.glob("*Request.json")):
            key = load_spec(path).get("apiKey")
            if key in KEYS:
                found.setdefault(key, path)
    missing = KEYS - set(found)
    if missing:
        raise SystemExit(f"no spec found for api keys {sorted(missing)}")
    written = []
    for _key, path in sorted(found.items()):
        request = load_spec(path)
        response = load_spec(path.with_name(path.name.replace("Request.json", "Response.json")))
        module = snake(request["name"].removesuffix("Request"))
        (OUT / f"{module}.py").write_text(module_text(request, response))
        written.append(module)
    return written


# --------------------------------------------------------------------------
# The README's coverage table
# --------------------------------------------------------------------------


def readme_table() -> str:
    sys.path.insert(0, str(ROOT))
    from hmb.api.registry import declared_handlers
    from kproto.api_keys import ApiKey
    from kproto.registry import REQUESTS

    served = {h.api_key: (h.min_version, h.max_version) for h in declared_handlers().values()}

    def span(lo: int, hi: int) -> str:
        return str(lo) if lo == hi else f"{lo}\u2013{hi}"

    rows = ["| API (key) | kproto encodes and decodes | hmb serves |", "|---|---|---|"]
    for key, msg in REQUESTS.items():
        name = msg.name.removesuffix("Request")
        assert ApiKey(key).name.replace("_", "") == name.upper(), (key, name)
        hmb = span(*served[key]) if key in served else "\u2014"
        rows.append(f"| {name} ({key}) | {span(msg.min_version, msg.max_version)} | {hmb} |")
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------
# hmb's handler index
# --------------------------------------------------------------------------

HANDLER_INDEX = ROOT / "hmb" / "api" / "handler_index.py"

_INDEX_TEMPLATE = '''"""Where each API key's handler lives and the versions it serves: the handlers'
``@handles`` declarations, written here by ``{command}``.
Do not edit: change the declaration and run that command (the registry test fails until this
file agrees with the code).

The broker builds its registry from this table (:mod:`hmb.api.registry`), so it answers
ApiVersions without importing the handler modules; each is imported when its key is first
spoken.
"""

from __future__ import annotations

from kproto.api_keys import ApiKey

INDEX: tuple[tuple[ApiKey, str, int, int], ...] = (
{rows})
"""(key, module in hmb.api, lowest version served, highest version served), by key."""
'''


def handler_index_text() -> str:
    """The source of ``hmb/api/handler_index.py``, from the handlers the code declares."""
    sys.path.insert(0, str(ROOT))
    from hmb.api.registry import REWRITE_INDEX, declared_handlers
    from kproto.api_keys import ApiKey

    rows = "".join(
        f'    (ApiKey.{ApiKey(key).name}, "{h.module.removeprefix("hmb.api.")}", '
        f"{h.min_version}, {h.max_version}),\n"
        for key, h in declared_handlers().items()
    )
    return _INDEX_TEMPLATE.format(command=REWRITE_INDEX, rows=rows)


def update_readme(path: Path) -> None:
    text = path.read_text()
    start = text.index("| API (key) | kproto encodes and decodes | hmb serves |")
    end = text.index("\n\n", start) + 1
    path.write_text(text[:start] + readme_table() + text[end:])


def main(argv: list[str]) -> None:
    if argv[:1] == ["--readme"]:
        HANDLER_INDEX.write_text(handler_index_text())
        update_readme(Path(argv[1]))
        return
    if not argv:
        raise SystemExit(__doc__)
    for module in generate([Path(a) for a in argv]):
        print(module)


if __name__ == "__main__":
    main(sys.argv[1:])
