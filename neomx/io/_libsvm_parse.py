"""A vectorised LibSVM text parser (NumPy only) and CSR row gathering for ``mx.io.LibSVMIter``.

A LibSVM line is ``label[:weight] [qid:n] index:value index:value ...`` (MXNet expects zero-based
indices); ``#`` starts a comment, blank lines are skipped. The parser works on the file's bytes
with NumPy: token boundaries, colons and line numbers come from the byte array, and every number
is converted in one ``astype`` of the tokens (no per-character or per-token Python loop, except
on the error path that locates a bad token to name its line).
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from ..base import MXNetError

__all__ = ["LibSVMRows", "parse_libsvm", "concat_rows", "take_rows", "part_range"]

_TO_SPACE = bytes.maketrans(b"\r\t\v\f", b"\n   ")
_COMMENT = re.compile(rb"#[^\n\r]*")
_QID = re.compile(rb"(?<![^\s])qid:\S*")


class LibSVMRows(NamedTuple):
    """Parsed rows: the first number of each line, the features as CSR, and where rows start."""

    labels: np.ndarray    # float32 (rows,)
    indptr: np.ndarray    # int64 (rows + 1,)
    indices: np.ndarray   # int64 (nnz,)
    values: np.ndarray    # float32 (nnz,)
    starts: np.ndarray    # int64 (rows,): byte offset of each row's first token
    lines: np.ndarray     # int64 (rows,): 1-based line number of each row


def _blank(m):
    return b" " * len(m.group())


def _error(path, line, what, token):
    return MXNetError(f'LibSVMIter: "{path}" line {int(line)}: {what}: '
                      f'{token.decode("utf-8", "replace")!r}')


def _empty(offset=0):
    return LibSVMRows(np.zeros(0, np.float32), np.zeros(1, np.int64), np.zeros(0, np.int64),
                      np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64))


def parse_libsvm(raw: bytes, width: int, path: str) -> LibSVMRows:
    """Parse LibSVM text ``raw`` whose feature indices must lie in ``[0, width)``.

    Raises MXNetError naming ``path`` and the line for a malformed token, a non-integer or
    out-of-range index.
    """
    if b"#" in raw:
        raw = _COMMENT.sub(_blank, raw)  # (same length: byte offsets are kept)
    if b"qid:" in raw:
        raw = _QID.sub(_blank, raw)
    raw = raw.translate(_TO_SPACE)
    b = np.frombuffer(raw, np.uint8)
    if b.size == 0:
        return _empty()
    ws = (b == 32) | (b == 10)
    solid = ~ws
    starts = np.flatnonzero(solid & np.concatenate(([True], ws[:-1])))
    if starts.size == 0:
        return _empty()
    ends = np.flatnonzero(solid & np.concatenate((ws[1:], [True]))) + 1
    # line numbers and colons per token by binary search over the (few) newline and colon
    # positions: cumulative sums over every byte were a third of the time
    line = np.searchsorted(np.flatnonzero(b == 10), starts) + 1
    colons = np.flatnonzero(b == 58)
    ncolon = np.searchsorted(colons, ends) - np.searchsorted(colons, starts)
    first = np.concatenate(([True], line[1:] != line[:-1]))
    bad = (ncolon > 1) | (~first & (ncolon == 0)) | \
        ((ncolon > 0) & ((b[starts] == 58) | (b[ends - 1] == 58)))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        what = "expected index:value" if not first[k] else "expected label[:weight]"
        raise _error(path, line[k], what, raw[starts[k]:ends[k]])
    tokens = raw.replace(b":", b" ").split()
    try:
        nums = np.array(tokens).astype(np.float64)
    except ValueError:
        for j, t in enumerate(tokens):
            try:
                float(t)
            except ValueError:
                k = int(np.searchsorted(np.cumsum(1 + ncolon), j, side="right"))
                raise _error(path, line[k], "not a number", raw[starts[k]:ends[k]]) from None
        raise
    offs = np.concatenate(([0], np.cumsum(1 + ncolon)[:-1]))
    labels = nums[offs[first]].astype(np.float32)
    feat = ~first
    idx = nums[offs[feat]]
    vals = nums[offs[feat] + 1].astype(np.float32)
    wrong = (idx != np.floor(idx)) | (idx < 0) | (idx >= width)
    if wrong.any():
        k = int(np.flatnonzero(feat)[np.flatnonzero(wrong)[0]])
        what = (f"feature index out of range [0, {width}) of the shape" if idx[wrong][0]
                == np.floor(idx[wrong][0]) else "feature index is not an integer")
        raise _error(path, line[k], what, raw[starts[k]:ends[k]])
    row_of = np.cumsum(first) - 1
    nrows = int(first.sum())
    indptr = np.zeros(nrows + 1, np.int64)
    np.cumsum(np.bincount(row_of[feat], minlength=nrows), out=indptr[1:])
    return LibSVMRows(labels, indptr, idx.astype(np.int64), vals, starts[first].astype(np.int64),
                      line[first].astype(np.int64))


def concat_rows(parts, offsets) -> LibSVMRows:
    """Rows of several files, one after the other (``offsets``: each file's first byte)."""
    if len(parts) == 1:
        return parts[0]
    ptrs, base = [np.zeros(1, np.int64)], 0
    for p in parts:
        ptrs.append(p.indptr[1:] + base)
        base += int(p.indptr[-1])
    return LibSVMRows(np.concatenate([p.labels for p in parts]), np.concatenate(ptrs),
                      np.concatenate([p.indices for p in parts]),
                      np.concatenate([p.values for p in parts]),
                      np.concatenate([p.starts + o for p, o in zip(parts, offsets)]),
                      np.concatenate([p.lines for p in parts]))


def take_rows(indptr, indices, values, rows):
    """CSR (indptr, indices, values) of the rows ``rows`` (an int array, any order/repeats)."""
    rows = np.asarray(rows, np.int64)
    begin = indptr[rows]
    lens = indptr[rows + 1] - begin
    ptr = np.zeros(rows.size + 1, np.int64)
    np.cumsum(lens, out=ptr[1:])
    pos = np.repeat(begin - ptr[:-1], lens) + np.arange(ptr[-1], dtype=np.int64)
    return ptr, indices[pos], values[pos]


def _record_begin(raw: bytes, pos: int) -> int:
    """dmlc's LineSplitter: from ``pos`` skip to the end of the line, then past line ends."""
    size = len(raw)
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    ends = [i for i in (raw.find(b"\n", pos), raw.find(b"\r", pos)) if i != -1]
    nl = min(ends, default=size)
    while nl < size and raw[nl:nl + 1] in (b"\n", b"\r"):
        nl += 1
    return nl


def part_range(raw: bytes, part_index: int, num_parts: int):
    """The byte range ``[begin, end)`` of part ``part_index`` of ``num_parts`` (dmlc's
    InputSplit: equal byte ranges, each moved to the start of the next line)."""
    size = len(raw)
    step = -(-size // num_parts)
    begin = _record_begin(raw, min(step * part_index, size))
    end = _record_begin(raw, min(step * (part_index + 1), size))
    return begin, max(begin, end)
