"""``hmb serve``: run the broker from flags and/or a Kafka ``server.properties``.

Precedence, lowest first: Kafka's defaults, ``--config`` file, ``--override``
settings, the dedicated flags (``--listen``, ``--data-dir`` ...).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import trio

from hmb import __version__, gc_policy
from hmb.broker import Broker
from hmb.cluster.errors import ClusterError
from hmb.config import (
    BrokerConfig,
    ConfigError,
    check_relations,
    from_properties,
    parse_listener,
    read_properties_file,
)
from hmb.log import index
from hmb.properties import BY_NAME
from hmb.properties.render import help_text, shown_default

log = logging.getLogger("hmb")


_DESCRIPTION = (
    "Run the hmb broker: a single Kafka-compatible broker on this machine. "
    "Kafka clients connect to the --listen address; data lives in --data-dir "
    "in Kafka's on-disk layout. Stop it with Ctrl-C (SIGINT) or SIGTERM: it "
    "flushes and closes the log before exiting."
)


class _ServeParser(argparse.ArgumentParser):
    """Lays out the settings list (the epilog) only when help is printed: wrapping every
    setting's text was a tenth of what ``hmb serve`` did before it could answer a client."""

    def format_help(self) -> str:
        if self.epilog is None:
            self.epilog = help_text()
        return super().format_help()


def build_parser(prog: str = "hmb serve") -> argparse.ArgumentParser:
    # The settings list is generated from the property table and laid out by
    # itself, hence the raw formatter (which leaves the description as given).
    p = _ServeParser(
        prog=prog,
        description=textwrap.fill(_DESCRIPTION, 79),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", metavar="FILE", type=Path, help="a Kafka-style server.properties file")
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help=f"address of the first listener (listeners; default {shown_default(BY_NAME['listeners'])}; "
        "port 0 = any free port)",
    )
    p.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="address clients are told to use (advertised.listeners; default: --listen)",
    )
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"where partitions are stored (log.dirs; default {shown_default(BY_NAME['log.dirs'])})",
    )
    p.add_argument(
        "--override",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="set any Kafka-named setting, e.g. --override num.partitions=3 (repeatable)",
    )
    p.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="logging verbosity"
    )
    p.add_argument("--version", action="version", version=f"hmb {__version__}")
    return p


def config_from_args(ns: argparse.Namespace) -> BrokerConfig:
    # The file and the overrides form one property set, so Kafka's own precedence
    # among related keys (log.retention.ms over .minutes over .hours) still holds.
    props = read_properties_file(ns.config) if ns.config is not None else {}
    for item in ns.override:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--override expects KEY=VALUE, got {item!r}")
        props[key.strip()] = value.strip()
    cfg = from_properties(props)
    if ns.listen:
        # the first listener moves (the others, from the file, stay where they are)
        first, rest = parse_listener(ns.listen, "--listen"), cfg.listeners[1:]
        names = {listener.name for listener in (first, *rest)}
        kept = tuple(a for a in cfg.advertised_listeners if a.name in names)
        cfg = replace(cfg, listeners=(first, *rest), advertised_listeners=kept)
    if ns.advertise:
        advertised = parse_listener(ns.advertise, "--advertise")
        first_name = cfg.listener.name
        kept = tuple(a for a in cfg.advertised_listeners if a.name != first_name)
        cfg = replace(cfg, advertised_listeners=(replace(advertised, name=first_name), *kept))
    check_relations(cfg)
    if ns.data_dir:
        cfg = replace(cfg, log_dirs=(Path(ns.data_dir),))
    return cfg


async def run(broker: Broker) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(broker.run)
            gc_policy.resume()  # listening: collect again (hmb serve's process only)
            nursery.start_soon(trio.to_thread.run_sync, index.load_numpy)  # see load_numpy

            async def stop_on_signal() -> None:
                async for sig in signals:
                    log.info("received %s, shutting down", signal.Signals(sig).name)
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(stop_on_signal)


def _cluster_error(group: BaseExceptionGroup[BaseException]) -> ClusterError | None:
    """The ClusterError a failed start is made of (nested in trio's groups), if that is all it is."""
    matched, rest = group.split(ClusterError)
    if matched is None or rest is not None:
        return None
    leaf: BaseException = matched
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf if isinstance(leaf, ClusterError) else None


def main(argv: Sequence[str] | None = None, prog: str = "hmb serve") -> int:
    ns = build_parser(prog).parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, ns.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    gc_policy.keep_imports()  # modules, classes, functions: no collection scans them again
    try:
        broker = Broker(config_from_args(ns))  # checks that every listener can be served
    except ConfigError as exc:
        print(f"hmb serve: {exc}", file=sys.stderr)
        return 2
    try:
        trio.run(run, broker)
    except OSError as exc:
        print(f"hmb serve: {exc}", file=sys.stderr)
        return 1
    except BaseExceptionGroup as group:
        reason = _cluster_error(group)
        if reason is None:
            raise
        print(f"hmb serve: {reason}", file=sys.stderr)
        return 1
    log.info("stopped")
    return 0
