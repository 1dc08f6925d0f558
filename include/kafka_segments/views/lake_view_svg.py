"""The lake view's inline SVG chart: a topic's live bytes and log start offsets over the manifest versions
(no script, no external asset: readable in a static file with JavaScript off)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from kafka_segments.views.lake_view_history import DryRun, TopicPoint

WIDTH = 640
HEIGHT = 180
PAD = 36
TOP = PAD // 2
"""The plot area's top edge."""
BOTTOM = TOP + HEIGHT - 2 * PAD
"""The plot area's bottom edge."""
BYTES_COLOUR = "#1f6feb"
OFFSETS_COLOUR = "#d1242f"
GREY = "#57606a"


def topic_chart(topic: str, points: Sequence[TopicPoint], dry_runs: Sequence[DryRun] = ()) -> str:
    """Two lines on one time axis (the versions, evenly spaced), each scaled from its own minimum to its
    own maximum, both labelled on its scale: live bytes (blue, left) and the sum of the partitions' log
    start offsets (red, right); a line that never changes is drawn mid-height with its one value. Below
    the plot, a hollow mark under each version a dry run built on (a dry run commits no version)."""
    if not points:
        return ""
    sizes = [p.size_bytes for p in points]
    starts = [p.log_start_offset_sum for p in points]
    xs = [_x(i, len(points)) for i in range(len(points))]
    x_of = {p.version: x for x, p in zip(xs, points, strict=True)}
    return "".join(
        [
            f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}"'
            f' aria-label="{escape(topic)}: live bytes and log start offsets per manifest version">',
            f'<rect x="{PAD}" y="{TOP}" width="{WIDTH - 2 * PAD}" height="{BOTTOM - TOP}"'
            ' fill="none" stroke="#d0d7de"/>',
            _line(xs, sizes, BYTES_COLOUR),
            _line(xs, starts, OFFSETS_COLOUR),
            *(_point(x, p, sizes, starts) for x, p in zip(xs, points, strict=True)),
            *_scale(4, sizes, BYTES_COLOUR),
            *_scale(WIDTH - PAD + 2, starts, OFFSETS_COLOUR),
            *(_dry_run(x_of[run.base_version], run) for run in dry_runs if run.base_version in x_of),
            _text(PAD, HEIGHT - 6, f"v{points[0].version}", GREY),
            _text(WIDTH - PAD - 24, HEIGHT - 6, f"v{points[-1].version}", GREY),
            "</svg>",
        ]
    )


def _x(index: int, count: int) -> float:
    span = WIDTH - 2 * PAD
    return PAD + (span / 2 if count == 1 else span * index / (count - 1))


def _y(value: int, values: Sequence[int]) -> float:
    """``value``'s height on the scale of ``values`` (their minimum at the bottom, maximum at the top; a
    series that never changes: mid-height)."""
    low, high = min(values), max(values)
    if high == low:
        return (TOP + BOTTOM) / 2
    return BOTTOM - (BOTTOM - TOP) * (value - low) / (high - low)


def _scale(x: float, values: Sequence[int], colour: str) -> list[str]:
    """The scale's labels: its maximum at the top and minimum at the bottom, or the one value of a series
    that never changes beside its line."""
    low, high = min(values), max(values)
    if high == low:
        return [_text(x, _y(low, values) + 4, str(low), colour, role="value")]
    return [_text(x, TOP + 10, str(high), colour, role="max"), _text(x, BOTTOM, str(low), colour, role="min")]


def _line(xs: Sequence[float], values: Sequence[int], colour: str) -> str:
    coordinates = " ".join(f"{x:.1f},{_y(v, values):.1f}" for x, v in zip(xs, values, strict=True))
    return f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coordinates}"/>'


def _point(x: float, point: TopicPoint, sizes: Sequence[int], starts: Sequence[int]) -> str:
    label = (
        f"version {point.version}: {point.size_bytes} bytes, log start offsets {point.log_start_offset_sum}"
    )
    return (
        f'<g class="point" data-version="{point.version}" data-size-bytes="{point.size_bytes}"'
        f' data-log-start-offsets="{point.log_start_offset_sum}"><title>{label}</title>'
        f'<circle cx="{x:.1f}" cy="{_y(point.size_bytes, sizes):.1f}" r="3" fill="{BYTES_COLOUR}"/>'
        f'<circle cx="{x:.1f}" cy="{_y(point.log_start_offset_sum, starts):.1f}" r="3"'
        f' fill="{OFFSETS_COLOUR}"/></g>'
    )


def _dry_run(x: float, run: DryRun) -> str:
    deleted = "; ".join(f"{d.name}: {d.segments} segment(s), {d.size_bytes} B" for d in run.deleted)
    label = f"dry run {run.run_id} on version {run.base_version}: would delete {deleted or 'nothing'}"
    return (
        f'<g class="dry-run" data-run-id="{escape(run.run_id)}" data-base-version="{run.base_version}">'
        f"<title>{escape(label)}</title>"
        f'<circle cx="{x:.1f}" cy="{BOTTOM + 10}" r="4" fill="none" stroke="{GREY}" stroke-width="1.5"/></g>'
    )


def _text(x: float, y: float, text: str, colour: str, *, role: str = "") -> str:
    scale = f' class="scale" data-scale="{role}"' if role else ""
    return f'<text x="{x:.0f}" y="{y:.0f}"{scale} font-size="10" fill="{colour}">{escape(text)}</text>'
