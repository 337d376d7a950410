"""Median time per call of several forms of one work, sampled alternately.

The forms run in a new order every round (a seeded shuffle: each form follows every other
about equally often) and a sample is as many calls as take about ``SAMPLE_SECONDS``, so
that a burst of load on a shared machine hits every form alike. A rotation kept each
form's predecessor, and a form's first calls pay for what its predecessor left: a form
sampled after onnxruntime's session took 1.3-1.4 times as long as the same form sampled
elsewhere (benchmarks/README.md, "Issue 33: rows placed in one pass").
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

SAMPLE_SECONDS = 2e-3  # calls per sample: enough for about this long


def medians(
    forms: dict[str, Callable[[], object]],
    rounds: int,
    prepare: dict[str, Callable[[], object]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    sample_seconds: float = SAMPLE_SECONDS,
) -> dict[str, float]:
    """Seconds per call of each form: the median of ``rounds`` interleaved samples (each
    form is called once first, as a warm-up). ``prepare[name]``, where given, runs untimed
    before each of that form's samples, followed by one untimed call of the form.
    ``clock`` times them: wall time, or ``time.thread_time`` for CPU time, which a
    loaded machine's scheduling disturbs less. A sample is as many calls as take about
    ``sample_seconds`` (longer samples average out calls that start with other forms'
    data in the caches)."""
    prepare = prepare or {}

    def ready(name: str) -> None:
        if name in prepare:
            prepare[name]()
            forms[name]()

    calls = {}
    for name, fn in forms.items():
        ready(name)
        fn()
        start = clock()
        fn()
        calls[name] = max(1, int(sample_seconds / max(clock() - start, 1e-7)))
    times: dict[str, list[float]] = {name: [] for name in forms}
    names, order = list(forms), random.Random(0)
    for _ in range(rounds):
        order.shuffle(names)
        for name in names:
            fn, k = forms[name], calls[name]
            ready(name)
            start = clock()
            for _ in range(k):
                fn()
            times[name].append((clock() - start) / k)
    return {name: statistics.median(ts) for name, ts in times.items()}


def with_setting(owner: object, name: str, value: object, call: Callable[[], T]) -> Callable[[], T]:
    """``call``, with ``owner.name`` set to ``value`` before each call: forms that differ
    by a module's bound, sampled alternately, each setting its own."""

    def set_then_call() -> T:
        setattr(owner, name, value)
        return call()

    return set_then_call
