"""The ``kafka-segments`` command line (README.md, "Command line"; ``--help`` on every command)."""
