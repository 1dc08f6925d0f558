"""``python -m kafka_segments`` is the ``kafka-segments`` command."""

from kafka_segments.cli.main import main

raise SystemExit(main())
