"""The lake view's inline SVG chart: a topic's live bytes and log start offsets over the manifest versions
(no script, no external asset: readable in a static file with JavaScript off)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from kafka_segments.views.lake_view_history import TopicPoint

WIDTH = 640
HEIGHT = 180
PAD = 36
BYTES_COLOUR = "#1f6feb"
OFFSETS_COLOUR = "#d1242f"


def topic_chart(topic: str, points: Sequence[TopicPoint]) -> str:
    """Two lines on one time axis (the versions, evenly spaced), each scaled to its own maximum: live bytes
    (blue, left scale) and the sum of the partitions' log start offsets (red, right scale)."""
    if not points:
        return ""
    sizes = [p.size_bytes for p in points]
    starts = [p.log_start_offset_sum for p in points]
    xs = [_x(i, len(points)) for i in range(len(points))]
    return "".join(
        [
            f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}"'
            f' aria-label="{escape(topic)}: live bytes and log start offsets per manifest version">',
            f'<rect x="{PAD}" y="{PAD // 2}" width="{WIDTH - 2 * PAD}" height="{HEIGHT - 2 * PAD}"'
            ' fill="none" stroke="#d0d7de"/>',
            _line(xs, sizes, BYTES_COLOUR),
            _line(xs, starts, OFFSETS_COLOUR),
            *(_point(x, p, sizes, starts) for x, p in zip(xs, points, strict=True)),
            _text(4, PAD // 2 + 10, str(max(sizes)), BYTES_COLOUR),
            _text(WIDTH - PAD + 2, PAD // 2 + 10, str(max(starts)), OFFSETS_COLOUR),
            _text(PAD, HEIGHT - 6, f"v{points[0].version}", "#57606a"),
            _text(WIDTH - PAD - 24, HEIGHT - 6, f"v{points[-1].version}", "#57606a"),
            "</svg>",
        ]
    )


def _x(index: int, count: int) -> float:
    span = WIDTH - 2 * PAD
    return PAD + (span / 2 if count == 1 else span * index / (count - 1))


def _y(value: int, top: int) -> float:
    span = HEIGHT - 2 * PAD
    return PAD // 2 + span - (span * value / top if top else 0.0)


def _line(xs: Sequence[float], values: Sequence[int], colour: str) -> str:
    top = max(values)
    coordinates = " ".join(f"{x:.1f},{_y(v, top):.1f}" for x, v in zip(xs, values, strict=True))
    return f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coordinates}"/>'


def _point(x: float, point: TopicPoint, sizes: Sequence[int], starts: Sequence[int]) -> str:
    label = (
        f"version {point.version}: {point.size_bytes} bytes, log start offsets {point.log_start_offset_sum}"
    )
    return (
        f'<g class="point" data-version="{point.version}" data-size-bytes="{point.size_bytes}"'
        f' data-log-start-offsets="{point.log_start_offset_sum}"><title>{label}</title>'
        f'<circle cx="{x:.1f}" cy="{_y(point.size_bytes, max(sizes)):.1f}" r="3" fill="{BYTES_COLOUR}"/>'
        f'<circle cx="{x:.1f}" cy="{_y(point.log_start_offset_sum, max(starts)):.1f}" r="3"'
        f' fill="{OFFSETS_COLOUR}"/></g>'
    )


def _text(x: float, y: float, text: str, colour: str) -> str:
    return f'<text x="{x:.0f}" y="{y:.0f}" font-size="10" fill="{colour}">{escape(text)}</text>'
