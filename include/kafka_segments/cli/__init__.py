"""The ``kafka-segments`` command line."""
