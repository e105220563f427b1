"""The "Security" settings: TLS, SASL, the authoriser and super users.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    BOOLEAN,
    INT,
    LIST,
    LONG,
    STRING,
    Property,
    Synonym,
)

SECURITY = "Security"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "ssl.keystore.type",
        STRING,
        "PEM",
        "The format of the keystore; hmb reads PEM files (certificate chain and private key).",
        SECURITY,
        attr="ssl_keystore_type",
        choices=("PEM",),
        kafka_default="JKS",
    ),
    Property(
        "ssl.keystore.location",
        STRING,
        None,
        "The PEM file with the broker's certificate chain and private key, for SSL and SASL_SSL listeners.",
        SECURITY,
        attr="ssl_keystore_location",
        shown_default="none",
    ),
    Property(
        "ssl.key.password",
        STRING,
        None,
        "The password of the private key in the keystore, when it is encrypted.",
        SECURITY,
        attr="ssl_key_password",
        synonyms=(Synonym("ssl.keystore.password"),),
        shown_default="none",
    ),
    Property(
        "ssl.truststore.type",
        STRING,
        "PEM",
        "The format of the truststore; hmb reads PEM files of CA certificates.",
        SECURITY,
        attr="ssl_truststore_type",
        choices=("PEM",),
        kafka_default="JKS",
    ),
    Property(
        "ssl.truststore.location",
        STRING,
        None,
        "The PEM file of the CA certificates client certificates are checked against.",
        SECURITY,
        attr="ssl_truststore_location",
        shown_default="none",
    ),
    Property(
        "ssl.client.auth",
        STRING,
        "none",
        "Whether a TLS client must show a certificate: `required`, `requested` (checked when "
        "shown) or `none`.",
        SECURITY,
        attr="ssl_client_auth",
        choices=("none", "requested", "required"),
    ),
    Property(
        "ssl.enabled.protocols",
        LIST,
        ("TLSv1.2", "TLSv1.3"),
        "The TLS versions the broker accepts.",
        SECURITY,
        attr="ssl_enabled_protocols",
        choices=("TLSv1.2", "TLSv1.3"),
    ),
    Property(
        "ssl.cipher.suites",
        LIST,
        (),
        "The cipher suites the broker offers (OpenSSL or IANA names); empty: the TLS library's defaults.",
        SECURITY,
        attr="ssl_cipher_suites",
        shown_default="the defaults",
    ),
    Property(
        "ssl.principal.mapping.rules",
        STRING,
        "DEFAULT",
        "Rules turning a client certificate's subject into a user name, as Kafka's "
        "`RULE:pattern/replacement/[LU]` list ending in `DEFAULT` (the whole subject).",
        SECURITY,
        attr="ssl_principal_mapping_rules",
    ),
    Property(
        "sasl.enabled.mechanisms",
        LIST,
        ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
        "The SASL mechanisms SASL listeners offer. Kafka's default is GSSAPI (Kerberos), "
        "which hmb does not have.",
        SECURITY,
        attr="sasl_enabled_mechanisms",
        kafka_default="GSSAPI",
    ),
    Property(
        "connections.max.reauth.ms",
        LONG,
        0,
        "How long a SASL authentication lasts before the client must authenticate again; 0: "
        "for the connection's life.",
        SECURITY,
        attr="connections_max_reauth_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "connection.failed.authentication.delay.ms",
        INT,
        100,
        "How long a failed authentication waits before it is answered, so that guessing passwords is slow.",
        SECURITY,
        attr="failed_authentication_delay_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "authorizer.class.name",
        STRING,
        "",
        "The authoriser: empty for none (everything is allowed), or Kafka's "
        "`org.apache.kafka.metadata.authorizer.StandardAuthorizer` for hmb's ACLs.",
        SECURITY,
        attr="authorizer_class_name",
        choices=(
            "",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "kafka.security.authorizer.AclAuthorizer",
        ),
        shown_default="none",
    ),
    Property(
        "super.users",
        STRING,
        "",
        "Principals the authoriser allows everything, separated by `;` (`User:admin;User:ops`).",
        SECURITY,
        attr="super_users",
        shown_default="none",
    ),
    Property(
        "allow.everyone.if.no.acl.found",
        BOOLEAN,
        False,
        "Whether a resource no ACL matches is open to everyone (true) or to super users only.",
        SECURITY,
        attr="allow_everyone_if_no_acl_found",
    ),
)
