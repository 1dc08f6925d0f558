"""Kafka's deletion-based retention and KIP-68 consumed retention, as predicates over segments."""
