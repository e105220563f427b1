"""``python -m kproto``: decode Kafka frames and tcpdump captures to JSON lines (see --help)."""

from kproto.inspect.cli import main

raise SystemExit(main())
