"""Kafka's transactions, coordinator side: the state machine, its log and the coordinator."""
