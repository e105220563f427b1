"""The cluster: brokers coordinated through ZooKeeper, in Kafka's ZooKeeper layout.

Used only when ``zookeeper.connect`` is set; a broker without it never imports
this package (nor kazoo) and runs alone.  docs/cluster.md describes the design.
"""
