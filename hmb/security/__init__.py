"""Who a client is and what it may do: principals, SASL mechanisms, credentials, ACLs.

Everything here is sans-I/O (no sockets, no trio): the network layer hands
it a certificate's subject, the API layer hands it SASL tokens and resource
names, and it answers with principals, tokens and decisions.  Persistence is
a JSON file per store, written atomically.
"""
