"""rAck, the fourth acknowledgement level: send without waiting, back up, resend what was lost.

``Producer(bootstrap_servers=..., acks="rack")`` is a :class:`RackProducer`:
it sends with acks = -2, which a rAck broker answers as acks = 0 but records a
receipt of each record; its :class:`Monitor` keeps a backup of each record in a
circular list (:mod:`hmb_client.rack.backups`), ticks backups off as receipts
come (:mod:`hmb_client.rack.receipts`) and resends with acks = -1 what has
none.  ``hmb rack-monitor`` runs a monitor on its own.
"""
