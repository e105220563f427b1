"""``--command-config FILE``: a Kafka client properties file, as Kafka's tools take it.

Read from it (Kafka's names -> this client's kafka-python names):
``security.protocol``; ``ssl.truststore.location`` (PEM CA certificates),
``ssl.keystore.location`` (a PEM file with the client certificate and its
key; ``ssl.key.password`` when the key is encrypted),
``ssl.endpoint.identification.algorithm`` (empty: no host-name check);
``sasl.mechanism`` and ``sasl.jaas.config`` (``username="..."`` and
``password="..."`` of the PlainLoginModule or ScramLoginModule line).  Other
keys are refused by name, so a typo does not silently connect insecurely.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hmb_client.tools.common import CliError

_KNOWN = (
    "security.protocol",
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "sasl.mechanism",
    "sasl.jaas.config",
)
_JAAS_OPTION = re.compile(r'(username|password)\s*=\s*"((?:\\.|[^"\\])*)"')


def read_properties(path: Path) -> dict[str, str]:
    props: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        match = re.match(r"([^=:\s]+)\s*[=:]\s*(.*)", line)
        if match is None:
            raise CliError(f"{path}: cannot read the line {raw!r}: expected key=value", code=2)
        props[match.group(1)] = match.group(2)
    return props


def security_settings(path: Path | None) -> dict[str, Any]:
    """The client's security keyword arguments from a command-config file (none: {})."""
    if path is None:
        return {}
    try:
        props = read_properties(path)
    except OSError as exc:
        raise CliError(f"cannot read --command-config {path}: {exc.strerror}", code=2) from None
    unknown = sorted(set(props) - set(_KNOWN))
    if unknown:
        raise CliError(f"{path}: settings hmb's tools do not know: {', '.join(unknown)}", code=2)
    out: dict[str, Any] = {}
    if "security.protocol" in props:
        out["security_protocol"] = props["security.protocol"].upper()
    if "ssl.truststore.location" in props:
        out["ssl_cafile"] = props["ssl.truststore.location"]
    if "ssl.keystore.location" in props:
        out["ssl_certfile"] = props["ssl.keystore.location"]
        out["ssl_keyfile"] = props["ssl.keystore.location"]
    if "ssl.key.password" in props:
        out["ssl_password"] = props["ssl.key.password"]
    if props.get("ssl.endpoint.identification.algorithm", "https") == "":
        out["ssl_check_hostname"] = False
    if "sasl.mechanism" in props:
        out["sasl_mechanism"] = props["sasl.mechanism"].upper()
    if "sasl.jaas.config" in props:
        options = dict(_JAAS_OPTION.findall(props["sasl.jaas.config"]))
        out["sasl_plain_username"] = options.get("username")
        out["sasl_plain_password"] = options.get("password")
    return out
