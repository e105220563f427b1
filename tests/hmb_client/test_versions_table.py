"""The client's version tables against kproto's registry.

hmb_client may only send a version kproto can encode and decode: every
range of ``CLIENT_VERSIONS`` (what the client builds) and of
``LEGACY_VERSIONS`` (what it assumes a broker without ApiVersions serves)
must lie inside ``kproto.registry.supported_versions()``.  Adding a version
to the client table before kproto declares it fails here, not on the wire.
"""

from __future__ import annotations

import pytest

from hmb_client.connection import API_VERSIONS_REQUEST, CLIENT_VERSIONS, LEGACY_VERSIONS, versions_from
from kproto import ApiKey
from kproto.registry import REQUESTS, supported_versions

TABLES = {"CLIENT_VERSIONS": CLIENT_VERSIONS, "LEGACY_VERSIONS": LEGACY_VERSIONS}


def outside_kproto(table: dict[int, tuple[int, int]]) -> list[str]:
    """Each entry of ``table`` that kproto does not declare, as a readable line."""
    declared = supported_versions()
    bad = []
    for key, (low, high) in table.items():
        name = ApiKey(key).name
        if key not in declared:
            bad.append(f"{name}: kproto has no grammar for this key")
            continue
        k_low, k_high = declared[key]
        if low > high or low < k_low or high > k_high:
            bad.append(f"{name}: client {low}-{high}, kproto declares {k_low}-{k_high}")
    return bad


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_version_the_client_sends_is_declared_by_kproto(name: str) -> None:
    assert outside_kproto(TABLES[name]) == []


def test_registry_and_supported_versions_agree() -> None:
    declared = supported_versions()
    for key in CLIENT_VERSIONS:
        assert (REQUESTS[key].min_version, REQUESTS[key].max_version) == declared[key]


def test_a_version_beyond_kproto_is_caught() -> None:
    """The check itself: one version past kproto's top is reported."""
    key = ApiKey.FETCH
    top = supported_versions()[key][1]
    broken = {**CLIENT_VERSIONS, key: (CLIENT_VERSIONS[key][0], top + 1)}
    assert outside_kproto(broken) == [f"FETCH: client 0-{top + 1}, kproto declares 0-{top}"]


def test_narrowed_ranges_stay_inside_the_table() -> None:
    low, high = versions_from(1, ApiKey.LIST_OFFSETS)
    assert (low, high) == (1, CLIENT_VERSIONS[ApiKey.LIST_OFFSETS][1])
    assert API_VERSIONS_REQUEST == 0  # every broker since Kafka 0.10 answers ApiVersions v0


def test_the_legacy_table_meets_the_client_table() -> None:
    """Against a 0.8.2 broker each API the client uses there still has a common version."""
    for key, (low, high) in LEGACY_VERSIONS.items():
        ours = CLIENT_VERSIONS[key]
        assert max(low, ours[0]) <= min(high, ours[1]), ApiKey(key).name
