"""Spark connector tests: the real broker (and Tansu) processes, and one local SparkSession.

The session is shared by every test here (starting a JVM costs tens of
seconds); tests are skipped cleanly when pyspark, pyarrow or Java is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from broker_process import broker, make_broker, tansu  # noqa: F401 - the shared fixtures


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] SparkSession with format("hmb") registered."""
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java (17) on the PATH")
    from pyspark.sql import SparkSession

    from hmb_client.spark import register

    session = (
        SparkSession.builder.master("local[2]")
        .appName("hmb-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
