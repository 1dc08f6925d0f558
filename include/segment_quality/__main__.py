"""``python -m segment_quality validate --lake L --run-id R [--config F] [--json]`` (see ``cli``)."""

from segment_quality.cli import main

raise SystemExit(main())
