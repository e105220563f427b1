"""hmb_client: the client library (producer, consumer, admin) and the ``hmb`` command."""

__version__ = "0.1.0"
