"""IDX files (the MNIST container format): read and write, plain or gzip-compressed.

An IDX file is a big-endian header followed by the raw array in C order::

    magic   u32   0x00 0x00 <type code> <ndim>   (2051 = ubyte, 3 dims; 2049 = ubyte, 1 dim)
    dims    u32 * ndim
    data    prod(dims) items of the type, big-endian

The readers trust nothing in the header: the declared payload must match the bytes actually
present (no truncation, no trailing data), dimensions and the total size are bounded
(``max_bytes``), and gzip input is decompressed in chunks, so a hostile file fails fast with an
:class:`~neomx.base.MXNetError` naming it and never makes the reader allocate more memory than
the file really holds. Whether a file is gzip-compressed is decided by its first two bytes, not
by its name.
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib

import numpy as np

from ..base import MXNetError

__all__ = ["IMAGE_MAGIC", "LABEL_MAGIC", "MAX_BYTES", "read_idx", "read_idx_images",
           "read_idx_labels", "write_idx", "write_idx_images", "write_idx_labels"]

IMAGE_MAGIC = 2051  # 0x00000803: unsigned bytes, 3 dimensions (count, rows, cols)
LABEL_MAGIC = 2049  # 0x00000801: unsigned bytes, 1 dimension (count)
MAX_BYTES = 1 << 30  # default cap on a payload (full MNIST is 47 MB, EMNIST byclass 0.64 GB)
MAX_IMAGE_SIDE = 1 << 16  # rows/cols above this are treated as a corrupt header

# IDX type code -> big-endian numpy dtype.
_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
          0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_CODES = {dt.newbyteorder("="): code for code, dt in _TYPES.items()}
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 22


def _fail(path, msg):
    return MXNetError(f"IDX file {os.fspath(path)!r}: {msg}")


class _Source:
    """A readable IDX byte stream (plain or gzip) that knows its size when it is plain."""

    def __init__(self, path):
        self.path = path
        try:
            self.raw = open(path, "rb")
        except OSError as e:
            raise _fail(path, f"cannot open: {e.strerror or e}") from None
        head = self.raw.read(2)
        self.raw.seek(0)
        self.gzipped = head == _GZIP_MAGIC
        self.stream = gzip.GzipFile(fileobj=self.raw, mode="rb") if self.gzipped else self.raw
        self.size = None if self.gzipped else os.fstat(self.raw.fileno()).st_size

    def read(self, n):
        """Up to ``n`` bytes; memory grows with the bytes really present, not with ``n``."""
        try:
            if n <= _CHUNK:
                return self.stream.read(n)
            parts, left = [], n
            while left > 0:
                part = self.stream.read(min(left, _CHUNK))
                if not part:
                    break
                parts.append(part)
                left -= len(part)
            return b"".join(parts)
        except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
            raise _fail(self.path, f"corrupt gzip stream ({e})") from None

    def close(self):
        if self.stream is not self.raw:
            self.stream.close()
        self.raw.close()


def _read_header(src: _Source):
    """Parse the magic and dims; returns (magic, dtype, dims)."""
    magic_bytes = src.read(4)
    if len(magic_bytes) < 4:
        raise _fail(src.path, f"too short for an IDX header ({len(magic_bytes)} bytes)")
    (magic,) = struct.unpack(">I", magic_bytes)
    zero, code, ndim = magic >> 16, (magic >> 8) & 0xFF, magic & 0xFF
    if zero != 0 or code not in _TYPES or not 1 <= ndim <= 8:
        raise _fail(src.path, f"bad magic number {magic} (0x{magic:08X}); not an IDX file")
    dim_bytes = src.read(4 * ndim)
    if len(dim_bytes) < 4 * ndim:
        raise _fail(src.path, f"truncated header: magic {magic} needs {ndim} dimensions")
    dims = struct.unpack(f">{ndim}I", dim_bytes)
    return magic, _TYPES[code], dims


def _payload_size(path, dtype, dims, max_bytes):
    total = dtype.itemsize
    for d in dims:
        total *= d  # python ints: no overflow
    if total > max_bytes:
        raise _fail(path, f"header declares dimensions {tuple(dims)} ({total} bytes), more than "
                          f"the limit of {max_bytes} bytes; the file is corrupt or hostile")
    return total


def read_idx(path, expect_magic: int | None = None, max_bytes: int = MAX_BYTES) -> np.ndarray:
    """Read an IDX file (plain or gzip) into a native-endian numpy array.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip compression is detected from its content.
    expect_magic : int, optional
        Required magic number (e.g. :data:`IMAGE_MAGIC`); any valid IDX magic when None.
    max_bytes : int
        Largest payload accepted; a header declaring more is rejected before reading on.

    Raises
    ------
    MXNetError
        The file is missing, not IDX, has another magic than ``expect_magic``, or its size does
        not match the header (truncated or trailing data).

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from neomx.io.idx import read_idx, write_idx
    >>> p = os.path.join(tempfile.mkdtemp(), "x-idx1-ubyte.gz")
    >>> write_idx(p, np.array([3, 1, 4], dtype=np.uint8))
    >>> read_idx(p, expect_magic=2049)
    array([3, 1, 4], dtype=uint8)
    """
    src = _Source(path)
    try:
        magic, dtype, dims = _read_header(src)
        if expect_magic is not None and magic != expect_magic:
            raise _fail(path, f"magic number {magic} (0x{magic:08X}), expected {expect_magic} "
                              f"(0x{expect_magic:08X})")
        nbytes = _payload_size(path, dtype, dims, max_bytes)
        header = 4 + 4 * len(dims)
        if src.size is not None and src.size != header + nbytes:
            raise _fail(path, f"header declares dimensions {tuple(dims)}, i.e. {header + nbytes} "
                              f"bytes, but the file has {src.size} bytes")
        data = src.read(nbytes + 1)  # one extra byte detects trailing data in gzip streams
        if len(data) < nbytes:
            raise _fail(path, f"truncated: header declares dimensions {tuple(dims)} "
                              f"({nbytes} data bytes), only {len(data)} present")
        if len(data) > nbytes:
            raise _fail(path, f"trailing data after the {nbytes} bytes declared by dimensions "
                              f"{tuple(dims)}")
    finally:
        src.close()
    arr = np.frombuffer(data, dtype=dtype, count=nbytes // dtype.itemsize).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))  # a writable, native-endian copy


def read_idx_images(path, max_bytes: int = MAX_BYTES) -> np.ndarray:
    """Images of an IDX image file (magic 2051) as uint8 ``(count, rows, cols)``."""
    arr = read_idx(path, expect_magic=IMAGE_MAGIC, max_bytes=max_bytes)
    _, rows, cols = arr.shape
    if not (1 <= rows <= MAX_IMAGE_SIDE and 1 <= cols <= MAX_IMAGE_SIDE):
        raise _fail(path, f"implausible image size {rows}x{cols}")
    return arr


def read_idx_labels(path, max_bytes: int = MAX_BYTES) -> np.ndarray:
    """Labels of an IDX label file (magic 2049) as uint8 ``(count,)``."""
    return read_idx(path, expect_magic=LABEL_MAGIC, max_bytes=max_bytes)


def write_idx(path, array, compress: bool | None = None) -> None:
    """Write ``array`` as an IDX file; gzip-compressed when ``compress`` (default: the name
    ends with ``.gz``)."""
    arr = np.asarray(array)
    code = _CODES.get(arr.dtype.newbyteorder("="))
    if code is None or not 1 <= arr.ndim <= 8:
        raise MXNetError(f"write_idx: cannot store a {arr.ndim}-d {arr.dtype} array as IDX")
    header = struct.pack(f">I{arr.ndim}I", (code << 8) | arr.ndim, *arr.shape)
    payload = np.ascontiguousarray(arr, dtype=_TYPES[code]).tobytes()
    if compress is None:
        compress = os.fspath(path).endswith(".gz")
    with open(path, "wb") as raw:
        if compress:  # no name and mtime 0 in the gzip header: the same array, the same bytes
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
                f.write(header + payload)
        else:
            raw.write(header)
            raw.write(payload)


def write_idx_images(path, images, compress: bool | None = None) -> None:
    """Write uint8 images ``(count, rows, cols)`` with magic 2051."""
    images = np.asarray(images)
    if images.ndim != 3:
        raise MXNetError(f"write_idx_images: expected (count, rows, cols), got {images.shape}")
    write_idx(path, images.astype(np.uint8, copy=False), compress)


def write_idx_labels(path, labels, compress: bool | None = None) -> None:
    """Write uint8 labels ``(count,)`` with magic 2049."""
    write_idx(path, np.asarray(labels).reshape(-1).astype(np.uint8, copy=False), compress)
