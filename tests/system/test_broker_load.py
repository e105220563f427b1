"""A short run of the load benchmark (bench/load.py) against a fresh broker.

200 idle connections making ApiVersions/Metadata calls, 5 idempotent
producers and 5 consumers (one slow) for 15 s, then every partition read
back from offset 0: no acknowledged record lost, none duplicated, each
producer's records in order, no error anywhere, broker memory bounded.
The minutes-long run with 1000 connections is in bench/results/load-*.md.
"""

from __future__ import annotations

from pathlib import Path

from bench.load import LoadConfig, run_load

RSS_BOUND = 300 * 2**20


def test_load_short(tmp_path: Path) -> None:
    cfg = LoadConfig(
        partitions=5,
        connections=200,
        producers=5,
        consumers=5,
        slow=1,
        duration=15,
        rate=50,
        producer_procs=1,
        consumer_procs=1,
    )
    result = run_load(cfg, data_dir=tmp_path / "data")
    v = result.verify

    assert not result.errors, result.errors[:10]
    sent = sum(p["sent"] for p in result.producers)
    assert sent >= 5 * 15 * 50 * 0.9
    assert result.acked == sent, "every record sent was acknowledged"
    assert (v["lost"], v["duplicates"], v["out_of_order"]) == (0, 0, 0), v
    assert v["records"] == v["log_end_total"] == sent
    assert all(c["out_of_order"] == 0 and c["consumed"] > 0 for c in result.consumers)
    assert result.idle["open_peak"] == 200 and result.idle["requests"] >= 200
    assert max(b for _, b in result.rss) < RSS_BOUND
    # the producer of the slow consumer's partition and the others kept their pace
    for p in result.producers:
        assert p["phases"]["B"]["acked"] >= 0.9 * cfg.rate * p["phases"]["B"]["seconds"], p["id"]
