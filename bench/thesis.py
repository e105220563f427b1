"""The thesis's published figures (HMB thesis, section 10.2), for the side-by-side tables.

Average TCP throughput of the producer's connection in MB/s, 10 s windows,
2015 hardware (Xeon E3-1245 v3 broker, 1 GbE, Kafka 0.8.2.0).  Scenarios:
S1 Kafka producer -> Kafka broker, S2 Kafka producer -> HMB, S3 HMB
producer -> Kafka broker, S4 HMB producer -> HMB.
"""

from __future__ import annotations

#: Table 10.3: 100-byte messages, batch size in bytes -> MB/s for S1..S4.
BATCH_SIZE_MB_S: dict[int, tuple[float, float, float, float]] = {
    195: (9, 8, 10, 9),
    1387: (24, 12, 11, 16),
    8192: (68, 54, 13, 15),
    16384: (80, 32, 14, 16),
    56769: (98, 48, 16, 17),
}

#: Table 10.5: batch 12800 bytes, message size in bytes -> MB/s for S1..S4.
MESSAGE_SIZE_MB_S: dict[int, tuple[float, float, float, float]] = {
    10: (85, 50, 48, 48),
    100: (70, 35, 15, 15),
    1000: (80, 75, 50, 55),
    10000: (95, 75, 100, 100),
    100000: (105, 100, 105, 100),
}

TABLES = {"batch-size": ("Table 10.3", BATCH_SIZE_MB_S), "message-size": ("Table 10.5", MESSAGE_SIZE_MB_S)}


def rows() -> list[tuple[str, int, int, float]]:
    """(study, value, scenario number, MB/s) for every published cell."""
    return [
        (study, value, s + 1, float(mb))
        for study, (_, table) in TABLES.items()
        for value, figures in table.items()
        for s, mb in enumerate(figures)
    ]
