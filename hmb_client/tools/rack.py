"""``hmb rack-monitor``: a rAck monitor on its own, for producers in other processes.

Rule of this module: it only parses options and runs
:class:`~hmb_client.rack.remote.MonitorServer`; what a monitor does is
:mod:`hmb_client.rack.monitor`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from hmb_client.tools.common import add_connection_options, client_security, positive_int

DESCRIPTION = """\
Run a rAck monitor. rAck producers in other processes, started with
Producer(..., acks="rack", rack_monitor="HOST:PORT"), send it a backup of every
record (JSON lines over TCP) and send the records themselves to the brokers
with acks=-2, without waiting. The monitor reads the brokers' receipts (the
__rack_receipts topic of a broker alone, or with --zookeeper the cluster's
/brokers/topics/<topic>/produce - <n> znodes), ticks the backups off in a
circular list with an age per slot, resends with acks=-1 and retries=0 every
backup unconfirmed on the list's second visit, and retries failed resends
every --retry-interval-ms. A producer's flush() returns once its monitor has
every record confirmed or resent and acknowledged. One monitor per producer
origin (client id), any number of producers.
"""

EXAMPLE = """
hmb rack-monitor --bootstrap-server 127.0.0.1:9092 --port 9099
hmb rack-monitor --bootstrap-server 127.0.0.1:9092 --zookeeper 127.0.0.1:2181/hmb --port 9099
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rack-monitor",
        help="run a rAck monitor for producers in other processes",
        description=DESCRIPTION,
        epilog="example:\n" + "\n".join("  " + line for line in EXAMPLE.strip().splitlines()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_connection_options(p, timeout_ms=30_000)
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9099, help="the port producers send backups to (default 9099)")
    p.add_argument(
        "--zookeeper",
        metavar="HOST:PORT[/CHROOT]",
        help="the cluster's zookeeper.connect: read receipts as znodes (default: the __rack_receipts topic)",
    )
    p.add_argument(
        "--slots", type=positive_int, default=15_000, help="the circular list's first size (default 15000)"
    )
    p.add_argument(
        "--max-slots",
        type=positive_int,
        default=1_000_000,
        help="how far the list may grow while receipts lag (default 1000000)",
    )
    p.add_argument(
        "--retry-interval-ms",
        type=positive_int,
        default=180_000,
        help="failed resends are sent again this often (default 180000: 3 minutes)",
    )
    p.add_argument(
        "--receipt-wait-ms",
        type=positive_int,
        default=10_000,
        help="at a producer's flush, resend what has no receipt once this long passes without a new "
        "receipt (default 10000)",
    )
    p.set_defaults(func=run_rack_monitor)


def run_rack_monitor(ns: argparse.Namespace) -> int:
    from hmb_client.rack.remote import MonitorServer

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    server = MonitorServer(
        ns.bootstrap_server,
        ns.host,
        ns.port,
        slots=ns.slots,
        max_slots=ns.max_slots,
        retry_interval_ms=ns.retry_interval_ms,
        receipt_wait_ms=ns.receipt_wait_ms,
        zookeeper_connect=ns.zookeeper,
        resend_config={"client_id": "hmb-rack-monitor", **client_security(ns)},
    )
    host, port = server.address
    print(f"hmb rack-monitor listening on {host}:{port}, brokers {ns.bootstrap_server}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print("hmb rack-monitor stopped", file=sys.stderr)
    return 0
