"""The ``kafka-segments`` command line (DESIGN §6)."""
