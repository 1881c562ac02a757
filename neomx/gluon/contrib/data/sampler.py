"""``gluon.contrib.data.IntervalSampler`` as MXNet 1.9.1's (its length is always the full
``length``, also with ``rollover=False``; ``gluon.data.IntervalSampler`` is MXNet 2's)."""
from __future__ import annotations

from ...data import sampler

__all__ = ["IntervalSampler"]


class IntervalSampler(sampler.Sampler):
    """Indices of ``[0, length)`` in strides of ``interval``: ``0, interval, 2 * interval,
    ...``, then (``rollover``, the default) ``1, 1 + interval, ...`` and so on until every
    index was visited once; without ``rollover`` only the first stride.

    Examples
    --------
    >>> from neomx.gluon.contrib.data import IntervalSampler
    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> list(IntervalSampler(13, interval=3, rollover=False))
    [0, 3, 6, 9, 12]
    """

    def __init__(self, length, interval, rollover=True):
        assert interval <= length, \
            "Interval {} must be smaller than or equal to length {}".format(interval, length)
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for first in range(self._interval if self._rollover else 1):
            yield from range(first, self._length, self._interval)

    def __len__(self):
        return self._length
