"""The record source behind ``ImageRecordIter``: dmlc-core's ``InputSplit`` over one ``.rec``.

MXNet's C++ iterators read a ``.rec`` through dmlc-core, and the order of the records, the
parts of ``num_parts`` and the shuffles are dmlc-core's, which this module repeats exactly:

* **parts** -- with an ``.idx`` the records (sorted by offset) are cut into parts of
  ``ceil(n / num_parts)`` records (the last one shorter); without it the *bytes* of the file are
  cut into ``num_parts`` ranges of ``ceil(size / num_parts)`` bytes (rounded up to 4), and a
  part holds the records that start in its range.
* **shuffle** -- each ``before_first`` (construction, ``reset``, the wrap-around of a round
  batch) draws a fresh permutation of the part's records with ``std::shuffle`` and a
  ``std::mt19937`` seeded with ``111 + seed`` (libstdc++'s algorithm: one ``uniform_int``
  draw per position); NumPy's ``RandomState(seed)`` is the same Mersenne Twister. Without an
  ``.idx`` the part's record offsets are found by scanning the record headers once.
"""
from __future__ import annotations

import os
import struct

import numpy as np

from .. import recordio
from ..base import MXNetError

__all__ = ["RecordSource", "std_shuffle"]

_MAGIC = struct.pack("<I", recordio.MAGIC)
_U32 = struct.Struct("<I")
_RAND_MAGIC = 111          # dmlc IndexedRecordIOSplitter's kRandMagic_
_URNG_RANGE = 2 ** 32 - 1  # std::mt19937::max() - min()


def std_shuffle(seq: list, rs: np.random.RandomState) -> None:
    """``std::shuffle(seq, mt19937)`` as libstdc++ (GCC < 10) does it, in place.

    Position ``i`` (1..n-1) swaps with ``uniform_int_distribution(0, i)``, which scales one
    32-bit draw down (``r // (range // (i + 1))``) and rejects draws past the last full bucket.
    """
    n = len(seq)
    i = 1
    while i < n:
        k = n - i
        raw = rs.randint(0, 2 ** 32, size=k, dtype=np.uint32).astype(np.int64)
        uerange = np.arange(i + 1, n + 1, dtype=np.int64)
        scaling = _URNG_RANGE // uerange
        rejected = np.flatnonzero(raw >= uerange * scaling)
        while True:
            # draws before the first rejection map to swap positions directly
            m = int(rejected[0]) if rejected.size else raw.size
            js = (raw[:m] // scaling[:m]).tolist()
            for t, j in enumerate(js):
                p = i + t
                seq[p], seq[j] = seq[j], seq[p]
            i += m
            if m == raw.size:
                break
            # a rejected draw: the remaining draws serve the positions from here on, one more
            # is drawn at the end
            raw = np.concatenate([raw[m + 1:], rs.randint(0, 2 ** 32, size=1, dtype=np.uint32)
                                  .astype(np.int64)])
            uerange = uerange[m:]
            scaling = scaling[m:]
            rejected = np.flatnonzero(raw >= uerange * scaling)


def _seek_record_begin(f, pos: int, size: int) -> int:
    """The first record start (magic + cflag 0/1 at a 4-aligned offset) at or after ``pos``."""
    while pos < size:
        f.seek(pos)
        buf = f.read(1 << 16)
        i = buf.find(_MAGIC)
        while i != -1:
            if (pos + i) % 4 == 0:
                if i + 8 > len(buf):
                    break
                if (_U32.unpack_from(buf, i + 4)[0] >> 29) in (0, 1):
                    return pos + i
            i = buf.find(_MAGIC, i + 1)
        if len(buf) < 8:
            return size
        pos += (len(buf) - 8) & ~3 or 4
    return size


def _read_index(path: str) -> list:
    """Record offsets of an ``.idx`` file (key<TAB>offset lines), sorted as dmlc sorts them."""
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise MXNetError(f"LocalFileSystem.GetPathInfo: {path} error: "
                         f"{e.strerror or e}") from None
    offsets = []
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            offsets.append(int(fields[1]))
        except (IndexError, ValueError):
            raise MXNetError(f'Invalid RecordIO index "{path}" line {lineno} ({line!r}): '
                             f"expected key<TAB>offset") from None
    return sorted(offsets)


class RecordSource:
    """The records of part ``part_index`` of ``num_parts`` of a ``.rec``, in dmlc's order.

    ``next()`` gives the next record's bytes (None at the end of the part); ``before_first()``
    rewinds (and reshuffles). ``state()``/``restore()`` snapshot the position (a tuple of
    immutable pieces), so an iterator can rewind prefetching that went too far.
    """

    def __init__(self, path_imgrec: str, path_imgidx: str = "", part_index: int = 0,
                 num_parts: int = 1, shuffle: bool = False, seed: int = 0):
        if not path_imgrec:
            raise MXNetError("ImageRecordIter2: Check failed: param_.path_imgrec.length() != 0: "
                             "must specify image_rec")
        if not 0 <= part_index < num_parts:
            raise MXNetError("Check failed: part < nsplit: invalid input parameter for "
                             "InputSplit::Create")
        if not os.path.isfile(path_imgrec):
            raise MXNetError("Check failed: files_.size() != 0U (0 vs. 0) : Cannot find any "
                             f"files that matches the URI pattern {path_imgrec}")
        self._rec = recordio.MXRecordIO(path_imgrec, "r")
        self.uri = path_imgrec
        size = os.path.getsize(path_imgrec)
        if path_imgidx:
            offsets = _read_index(path_imgidx)
            offsets = [o for o in offsets if o < size]
            n = len(offsets)
            step = -(-n // num_parts)
            begin = min(step * part_index, n)
            end = min(step * (part_index + 1), n)
            self._offsets = offsets[begin:end]
            self._begin = self._end = 0
        else:
            step = -(-size // num_parts)
            step = (step + 3) // 4 * 4
            begin, end = min(step * part_index, size), min(step * (part_index + 1), size)
            f = self._rec._f
            if begin < end:
                if end != size:
                    end = _seek_record_begin(f, end, size)
                if begin != 0:
                    begin = _seek_record_begin(f, begin, size)
            self._begin, self._end = begin, max(begin, end)
            self._offsets = self._scan(begin, self._end) if shuffle else None
        self._shuffle = bool(shuffle)
        self._rs = np.random.RandomState(_RAND_MAGIC + int(seed)) if shuffle else None
        self._order = self._offsets
        self._pos = 0
        self.before_first()

    def _scan(self, begin: int, end: int) -> list:
        """Offsets of the records in [begin, end) (reads only the headers)."""
        f = self._rec._f
        out = []
        pos = begin
        while pos < end:
            f.seek(pos)
            head = f.read(8)
            if len(head) < 8 or head[:4] != _MAGIC:
                raise MXNetError(f'Invalid RecordIO file "{self.uri}" at byte offset {pos}: '
                                 "bad record header")
            lrec = _U32.unpack_from(head, 4)[0]
            if (lrec >> 29) in (0, 1):
                out.append(pos)
            pos += 8 + (((lrec & ((1 << 29) - 1)) + 3) & ~3)
        return out

    def __len__(self):
        return len(self._offsets) if self._offsets is not None else -1

    def before_first(self) -> None:
        """Back to the first record of the part (a new permutation when shuffling)."""
        if self._shuffle:
            order = list(self._offsets)
            std_shuffle(order, self._rs)
            self._order = order
            self._rs_state = self._rs.get_state()
            self._pos = 0
        elif self._offsets is not None:
            self._pos = 0
        else:
            self._pos = self._begin

    def next(self):
        """The next record's bytes, or None at the end of the part."""
        rec = self._rec
        if self._order is not None:
            if self._pos >= len(self._order):
                return None
            rec._f.seek(self._order[self._pos])
            self._pos += 1
            return rec.read()
        if self._pos >= self._end:
            return None
        rec._f.seek(self._pos)
        data = rec.read()
        self._pos = rec._f.tell()
        return data

    def state(self):
        return (self._order, self._pos, self._rs_state if self._shuffle else None)

    def restore(self, state) -> None:
        self._order, self._pos, rs_state = state
        if rs_state is not None:
            self._rs.set_state(rs_state)
            self._rs_state = rs_state

    def close(self):
        self._rec.close()
