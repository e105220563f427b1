"""Fixtures for the kproto tests."""

from __future__ import annotations

from collections.abc import Iterator

import cramjam
import kafka.codec as kafka_codec
import kafka.record.default_records as kafka_default
import pytest


@pytest.fixture(scope="module")
def kafka_python_zstd() -> Iterator[None]:
    """kafka-python with a zstd codec: cramjam's when the ``zstandard`` package is missing."""
    if kafka_codec.has_zstd():
        yield
        return
    with pytest.MonkeyPatch.context() as mp:

        def encode(data: bytes) -> bytes:
            return bytes(cramjam.zstd.compress(bytes(data)))

        def decode(data: bytes) -> bytes:
            return bytes(cramjam.zstd.decompress(bytes(data)))

        mp.setattr(kafka_codec, "has_zstd", lambda: True)
        mp.setattr(kafka_default, "zstd_encode", encode)
        mp.setattr(kafka_default, "zstd_decode", decode)
        yield
