"""Figures: nearest-rank percentiles of the samples, and their text as the tables print them."""

from __future__ import annotations

import math
import unicodedata

MS = 1_000_000


def summarize(samples: list[int]) -> dict:
    s = sorted(samples)
    n = len(s)

    def rank(p: float) -> int:
        return s[min(n - 1, max(0, math.ceil(p * n) - 1))]

    return {"n": n, "p50_ns": rank(0.50), "p90_ns": rank(0.90), "p99_ns": rank(0.99), "max_ns": s[-1],
            "min_ns": s[0], "mean_ns": round(sum(s) / n)}


# How a time is printed: below each bound (ns), divided by the unit's ns, in that format; from 1 s on, seconds.
NS_FORMATS = ((100_000, 1000, "{:.1f} µs"), (1_000_000, 1000, "{:.0f} µs"),
              (100_000_000, 1e6, "{:.2f} ms"), (1_000_000_000, 1e6, "{:.0f} ms"))


def fmt_ns(ns: float | None) -> str:
    """A time in ns as the tables print it: 9.0 µs, 137 µs, 8.96 ms, 159 ms, 1.17 s; "-" for none."""
    if ns is None:
        return "-"
    for bound, unit, form in NS_FORMATS:
        if ns < bound:
            return form.format(ns / unit)
    return f"{ns / 1e9:.2f} s"



def width(text: str) -> int:
    """Columns on a terminal: East Asian wide characters (Hangul) take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def format_table(cols: tuple, rows: list[tuple]) -> str:
    widths = [max(width(str(c)), *(width(str(r[i])) for r in rows)) for i, c in enumerate(cols)]
    right = [i for i, c in enumerate(cols) if i > 0 and c not in ("target", "baseline", "met")]

    def line(values):
        cells = []
        for i, (v, w) in enumerate(zip(values, widths)):
            pad = " " * (w - width(str(v)))
            cells.append(pad + str(v) if i in right else str(v) + pad)
        return "  ".join(cells).rstrip()
    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows])


# ---------------------------------------------------------------------------------------------------
# Helpers
