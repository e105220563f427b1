"""The package's front door: public names at the top, loaded lazily.

``from hmb_client import Producer, Consumer, Admin`` gives the classes of
the submodules; ``import hmb_client`` (which every ``hmb`` command pays,
``--help`` included) loads neither trio nor kproto nor any client module.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import hmb_client
from hmb_client.admin import Admin
from hmb_client.consumer import Consumer, ConsumerRebalanceListener
from hmb_client.producer import Producer, RecordMetadata
from hmb_client.structs import TopicPartition


def test_public_classes_are_importable_from_the_top() -> None:
    from hmb_client import Admin as TopAdmin
    from hmb_client import Consumer as TopConsumer
    from hmb_client import ConsumerRebalanceListener as TopListener
    from hmb_client import Producer as TopProducer
    from hmb_client import RecordMetadata as TopRecordMetadata
    from hmb_client import TopicPartition as TopTopicPartition
    from hmb_client import errors

    assert (TopAdmin, TopConsumer, TopListener, TopProducer) == (
        Admin,
        Consumer,
        ConsumerRebalanceListener,
        Producer,
    )
    assert (TopRecordMetadata, TopTopicPartition) == (RecordMetadata, TopicPartition)
    assert issubclass(errors.NoBrokersAvailable, errors.KafkaError)


def test_every_public_name_resolves_and_unknown_names_fail() -> None:
    for name in hmb_client.__all__:
        assert getattr(hmb_client, name) is not None
        assert name in dir(hmb_client)
    with pytest.raises(AttributeError, match="no_such_name"):
        hmb_client.no_such_name  # noqa: B018


@pytest.mark.parametrize("module", ["hmb_client", "hmb_client.cli", "hmb_cmd"])
def test_importing_the_command_loads_no_client_machinery(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "heavy = {'trio', 'kproto', 'hmb', 'hmb_client.producer', 'hmb_client.consumer',\n"
        "         'hmb_client.admin'}\n"
        "print(sorted(m for m in sys.modules if m in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
