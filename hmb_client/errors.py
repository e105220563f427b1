"""Exceptions named after Kafka's error codes.

Every Kafka error code has a class here, named the way Kafka's Java client
names its exceptions minus the Java suffix plus ``Error``:
``UNKNOWN_TOPIC_OR_PARTITION`` -> :class:`UnknownTopicOrPartitionError`.
``error_for(code)`` gives the class for a code; ``retriable`` says whether
sending the same request again may succeed (the producer's retry loop and
callers' own loops use it).
"""

from __future__ import annotations

from kproto import ErrorCode


class KafkaError(Exception):
    """Base class of every error this client raises."""

    retriable = False
    code: int | None = None


class KafkaTimeoutError(KafkaError):
    """An operation did not complete within its timeout."""

    retriable = True


class KafkaConnectionError(KafkaError):
    """A broker could not be reached or the connection broke."""

    retriable = True


class NoBrokersAvailable(KafkaConnectionError):  # noqa: N818 - kafka-python's name, kept for users
    """None of the bootstrap servers answered."""


class SaslAuthenticationFailedError(KafkaError):
    """The broker refused the SASL credentials (or does not offer the mechanism): not retried."""


class IllegalStateError(KafkaError):
    """The client was used in a way its state does not allow (e.g. send after close)."""


class BrokerResponseError(KafkaError):
    """An error code returned by a broker."""

    code: int = ErrorCode.UNKNOWN_SERVER_ERROR
    description = ""

    def __init__(self, message: str = "") -> None:
        name = ErrorCode.of(self.code).name
        super().__init__(f"[{self.code} {name}] {message or self.description}".rstrip())


def _class_name(code: ErrorCode) -> str:
    return "".join(part.capitalize() for part in code.name.split("_")) + "Error"


_BY_CODE: dict[int, type[BrokerResponseError]] = {}
for _code in ErrorCode:
    if _code == ErrorCode.NONE or _code.value in _BY_CODE:
        continue
    _cls = type(
        _class_name(_code),
        (BrokerResponseError,),
        {
            "code": int(_code),
            "retriable": _code.retriable,
            "description": _code.description,
            "__doc__": _code.description or _code.name,
            "__module__": __name__,
        },
    )
    _BY_CODE[int(_code)] = _cls
    globals()[_cls.__name__] = _cls


def error_for(code: int) -> type[BrokerResponseError]:
    """The exception class for a Kafka error code (UnknownServerErrorError for unknown codes)."""
    return _BY_CODE.get(code, _BY_CODE[ErrorCode.UNKNOWN_SERVER_ERROR])


def __getattr__(name: str) -> type[BrokerResponseError]:  # for type checkers and dir()
    for cls in _BY_CODE.values():
        if cls.__name__ == name:
            return cls
    raise AttributeError(name)
