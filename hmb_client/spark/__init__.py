"""Spark reads and writes topics: ``format("hmb")`` with the options and schema of Spark's Kafka source.

::

    from hmb_client.spark import register
    register(spark)
    df = (spark.read.format("hmb")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "events").load())

Built on PySpark 4's Python Data Source API and :mod:`hmb_client`, so it
works against hmb and any Kafka-compatible broker without a JVM-side jar.
pyspark (and pyarrow, which that API's workers need) are imported only
here: ``import hmb_client`` never needs them.

Workers are separate Python processes started with the interpreter the
SparkContext was created with (``PYSPARK_PYTHON``, default ``python3``).
If that is not set, :func:`register` points Spark at this interpreter
(``sys.executable``), so the workers find hmb_client, pyarrow and the rest
of this environment.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["register", "worker_python"]


def worker_python(spark: SparkSession) -> str:
    """The interpreter Spark starts its Python workers with, made this one unless chosen explicitly.

    The data source is registered as a pickled class that names this
    interpreter's modules, so a worker must run in the same environment.
    An explicit ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` is respected.
    """
    sc = spark.sparkContext
    chosen = os.environ.get("PYSPARK_PYTHON") or sc.getConf().get("spark.pyspark.python")
    if not chosen:
        sc.pythonExec = sys.executable
    return sc.pythonExec


def register(spark: SparkSession) -> None:
    """Make ``format("hmb")`` available in ``spark`` (readers, writers, batch and streaming)."""
    from hmb_client.spark.source import HmbDataSource

    worker_python(spark)
    spark.dataSource.register(HmbDataSource)
