"""``mx.recordio``: MXNet's RecordIO files (``.rec``, with an optional ``.idx``), byte-compatible
with MXNet 1.9.1 in both directions.

File format (dmlc-core's ``RecordIOWriter``, little-endian). Each record is written as one or
more *parts*::

    u32 magic 0xced7230a | u32 lrec = cflag << 29 | length | length bytes | 0-3 zero bytes (pad to 4)

A record's data never contains the magic at a 4-aligned offset: the writer cuts the record at
each such occurrence and drops those 4 bytes, so one record becomes parts with cflag 1 (first),
2 (middle) and 3 (last), and the reader puts the magic back between them; a record that needs no
cut is a single part with cflag 0. A record is at most ``2**29 - 1`` bytes (MXNet refuses larger
ones). An ``.idx`` file holds one ``key\\tbyte offset\\n`` line per record.

Reading checks every header against the file: a bad magic, a truncated header or payload, a
length past the end of the file, or a cflag out of sequence raises :class:`MXNetError` naming the
file and the offset at once (MXNet 1.9.1 returns ``None`` for some of these). No buffer is
allocated before its length has been checked against the file's size.

>>> import os, tempfile, neomx as mx
>>> path = os.path.join(tempfile.mkdtemp(), 'tmp.rec')
>>> w = mx.recordio.MXRecordIO(path, 'w')
>>> for i in range(3):
...     w.write(b'record_%d' % i)
>>> w.close()
>>> r = mx.recordio.MXRecordIO(path, 'r')
>>> r.read(), r.read(), r.read(), r.read()
(b'record_0', b'record_1', b'record_2', None)
"""
from __future__ import annotations

import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from .base import MXNetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_HEADER = struct.Struct("<II")
_LEN_MASK = (1 << 29) - 1
_MAX_RECORD = 1 << 29


_CV2 = []


def _require_cv2():
    """OpenCV's module, or a clear error naming the extra that installs it.

    On first use OpenCV's own thread pool is set to 1 thread (``cv2.setNumThreads(1)``; call
    it again afterwards to change that): neomx decodes and resizes one image per call, where
    OpenCV's pool gains little and its threads compete with PyTorch's (ImageIter on a busy
    2-core machine: about 1.3x faster with it).
    """
    if _CV2:
        return _CV2[0]
    try:
        import cv2
    except ImportError as e:
        raise MXNetError(
            "mx.image and mx.recordio.pack_img/unpack_img need OpenCV, which is not installed: "
            "pip install neomx[image]  (it installs opencv-python-headless)") from e
    cv2.setNumThreads(1)
    _CV2.append(cv2)
    return cv2


class _MissingKey(MXNetError, KeyError):
    """A key absent from an ``.idx`` (a ``KeyError`` as in MXNet, and an ``MXNetError``)."""

    def __str__(self):
        return RuntimeError.__str__(self)


class MXRecordIO:
    """Reads or writes a RecordIO file sequentially.

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write (the file is truncated) or ``'r'`` to read.

    A reader pickles (e.g. into a DataLoader worker process) as its path and state: the copy
    reopens the file at its start; the original is left as it was. A reader used by a forked
    process must be reset first (``seek`` does that itself), as in MXNet.

    >>> import os, tempfile, neomx as mx
    >>> path = os.path.join(tempfile.mkdtemp(), 'a.rec')
    >>> w = mx.recordio.MXRecordIO(path, 'w')
    >>> w.write(b'abcde'); w.tell()
    16
    >>> w.close(); os.path.getsize(path)
    16
    """

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self._f = None
        self.open()

    # -- state: open -> (read | write)* -> close; reset = close + open ----------------------

    def open(self):
        """Opens the record file ('w' truncates it)."""
        if self.flag == "w":
            self._f = self._open_file(self.uri, "wb")
            self.writable = True
        elif self.flag == "r":
            self._f = self._open_file(self.uri, "rb")
            self.writable = False
            self._size = os.fstat(self._f.fileno()).st_size
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        self.pid = current_process().pid
        self.is_open = True

    @staticmethod
    def _open_file(path, mode):
        try:
            return open(path, mode)
        except OSError as e:
            raise MXNetError(f'RecordIO: cannot open "{path}": {e.strerror or e}') from e

    def close(self):
        """Closes the record file (a writer's data is flushed to disk)."""
        if not getattr(self, "is_open", False):
            return
        self._f.close()
        self._f = None
        self.is_open = False
        self.pid = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def reset(self):
        """Back to the first record (a writer truncates its file to empty)."""
        self.close()
        self.open()

    def __getstate__(self):
        d = dict(self.__dict__)
        if self.is_open and self.writable:
            self._f.flush()
        d["_f"] = None
        d.pop("_size", None)
        return d

    def __setstate__(self, d):
        is_open = d["is_open"]
        self.__dict__.update(d)
        self.is_open = False
        self._f = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """A handle opened by another process is reset (``allow_reset``) or refused."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise MXNetError(f'RecordIO "{self.uri}": forbidden operation in multiple '
                                 "processes (the file was opened by another process; reset() "
                                 "it in this one)")

    def _check_mode(self, writable, what):
        if not self.is_open:
            raise MXNetError(f'RecordIO "{self.uri}": {what} on a closed file')
        if self.writable != writable:
            mode = "writer" if self.writable else "reader"
            raise MXNetError(f'RecordIO "{self.uri}": {what} on a {mode}')

    # -- writing ---------------------------------------------------------------------------------

    def write(self, buf):
        """Appends ``buf`` (bytes-like) as one record."""
        self._check_mode(True, "write")
        self._check_pid(allow_reset=False)
        if isinstance(buf, str) or not isinstance(buf, (bytes, bytearray, memoryview)):
            raise MXNetError(f"RecordIO.write needs bytes, got {type(buf).__name__}")
        size = buf.nbytes if isinstance(buf, memoryview) else len(buf)
        if size >= _MAX_RECORD:
            raise MXNetError(f"RecordIO only accepts records of less than 2^29 bytes, got "
                             f"{size}")
        _write_record(self._f, bytes(buf))

    def tell(self):
        """The current byte offset (of the next record to write or read)."""
        if not self.is_open:
            raise MXNetError(f'RecordIO "{self.uri}": tell on a closed file')
        return self._f.tell()

    # -- reading ---------------------------------------------------------------------------------

    def read(self):
        """The next record as bytes, or ``None`` at the end of the file."""
        self._check_mode(False, "read")
        self._check_pid(allow_reset=False)
        return _read_record(self._f, self)


def _write_record(f, data: bytes):
    """One record as dmlc's writer lays it out (cut at each 4-aligned magic)."""
    n = len(data)
    start = 0
    i = data.find(_MAGIC_BYTES)
    while i != -1:
        if i % 4 == 0:
            f.write(_HEADER.pack(MAGIC, ((1 if start == 0 else 2) << 29) | (i - start)))
            f.write(data[start:i])
            start = i + 4
            i = data.find(_MAGIC_BYTES, start)
        else:
            i = data.find(_MAGIC_BYTES, i + 1)
    f.write(_HEADER.pack(MAGIC, ((3 if start else 0) << 29) | (n - start)))
    f.write(data[start:] if start else data)
    pad = -n % 4
    if pad:
        f.write(b"\0" * pad)


def _read_record(f, rec: MXRecordIO):
    """The next record of ``f`` (checked against the file size), or None at its end."""
    pos = f.tell()
    head = f.read(8)
    if not head:
        return None
    parts = []
    while True:
        if len(head) != 8:
            _corrupt(rec, pos, f"truncated record header ({len(head)} of 8 bytes)")
        magic, lrec = _HEADER.unpack(head)
        if magic != MAGIC:
            _corrupt(rec, pos, f"bad magic 0x{magic:08x} (expected 0x{MAGIC:08x})")
        cflag, length = lrec >> 29, lrec & _LEN_MASK
        if cflag > 3 or (cflag in (0, 1)) != (not parts):
            where = "first part" if not parts else "continuation part"
            _corrupt(rec, pos, f"cflag {cflag} out of sequence for a record's {where}")
        padded = (length + 3) & ~3
        end = pos + 8 + padded
        if end > rec._size:
            rec._size = os.fstat(f.fileno()).st_size  # the file may have grown since open
            if end > rec._size:
                _corrupt(rec, pos, f"record length {length} runs past the end of the file "
                                   f"({rec._size} bytes)")
        data = f.read(padded)
        if len(data) != padded:
            _corrupt(rec, pos, f"truncated record ({len(data)} of {padded} bytes)")
        parts.append(data[:length] if padded != length else data)
        if cflag in (0, 3):
            break
        pos = end
        head = f.read(8)
        if not head:
            _corrupt(rec, pos, "the file ends inside a multi-part record")
    return parts[0] if len(parts) == 1 else _MAGIC_BYTES.join(parts)


def _corrupt(rec, pos, what):
    raise MXNetError(f'Invalid RecordIO file "{rec.uri}" at byte offset {pos}: {what}')


class MXIndexedRecordIO(MXRecordIO):
    """Reads or writes a RecordIO file with an index (``.idx``) for random access.

    Parameters
    ----------
    idx_path : str
        Path to the index file (``key\\toffset`` lines).
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` or ``'r'``.
    key_type : type
        Type of the keys (``int``).

    >>> import os, tempfile, neomx as mx
    >>> d = tempfile.mkdtemp()
    >>> w = mx.recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
    >>> for i in range(3):
    ...     w.write_idx(i, b'record_%d' % i)
    >>> w.close()
    >>> r = mx.recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'r')
    >>> r.keys, r.read_idx(2)
    ([0, 1, 2], b'record_2')
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError as e:
            super().close()
            raise MXNetError(f'RecordIO: cannot open index "{self.idx_path}": '
                             f"{e.strerror or e}") from e
        if not self.writable:
            self._load_index()

    def _load_index(self):
        with self.fidx:
            for lineno, line in enumerate(self.fidx, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                try:
                    if len(fields) != 2:
                        raise ValueError(f"{len(fields)} tab-separated fields, expected 2")
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except ValueError as e:
                    raise MXNetError(f'Invalid RecordIO index "{self.idx_path}" line {lineno} '
                                     f"({line.strip()!r}): {e}") from None
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        """Closes the record and index files (flushing a writer's index)."""
        if not getattr(self, "is_open", False):
            return
        super().close()
        if self.fidx is not None:
            self.fidx.close()

    def __getstate__(self):
        d = super().__getstate__()
        if self.is_open and self.writable:
            self.fidx.flush()
        d["fidx"] = None
        return d

    def seek(self, idx):
        """Moves the read position to the record of key ``idx``."""
        self._check_mode(False, "seek")
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise _MissingKey(f'key {idx!r} is not in the index "{self.idx_path}"') from None
        if not 0 <= pos <= self._size:
            self._size = os.fstat(self._f.fileno()).st_size
            if not 0 <= pos <= self._size:
                raise MXNetError(f'RecordIO index "{self.idx_path}": offset {pos} of key {idx!r} '
                                 f'is outside "{self.uri}" ({self._size} bytes)')
        self._f.seek(pos)

    def read_idx(self, idx):
        """The record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Appends ``buf`` as the record of key ``idx``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """The header of an image record (``pack``/``unpack``).

flag : int
    0 for one float label; n > 0 when ``label`` is an array of n floats (stored after the header).
label : float or array of float
id, id2 : int
    The record's id (``id2`` holds its high bits; usually 0).
"""
_IR_FORMAT = "IfQQ"
_IR = struct.Struct(_IR_FORMAT)
_IR_SIZE = _IR.size


def pack(header, s):
    """Packs ``header`` (an :data:`IRHeader`) and the bytes ``s`` into one record's payload.

    A number label is stored in the header (flag 0); an array label is stored as float32
    values after it, with flag = its size.

    >>> import neomx as mx
    >>> p = mx.recordio.pack(mx.recordio.IRHeader(0, [1, 2], 7, 0), b'img')
    >>> h, s = mx.recordio.unpack(p)
    >>> h.flag, h.label.tolist(), h.id, s
    (2, [1.0, 2.0], 7, b'img')
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    try:
        return _IR.pack(*header) + bytes(s)
    except struct.error as e:
        raise MXNetError(f"pack: invalid header {tuple(header)}: {e}") from None


def unpack(s):
    """Splits a record payload into (:data:`IRHeader`, remaining bytes)."""
    if len(s) < _IR_SIZE:
        raise MXNetError(f"unpack: a record of {len(s)} bytes is shorter than the "
                         f"{_IR_SIZE}-byte image record header")
    header = IRHeader(*_IR.unpack_from(s))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise MXNetError(f"unpack: the header announces {header.flag} float labels but "
                             f"only {len(s)} bytes follow it")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """(header, image as a numpy array in OpenCV's BGR order) from a record payload."""
    cv2 = _require_cv2()
    header, s = unpack(s)
    img = cv2.imdecode(np.frombuffer(s, dtype=np.uint8), iscolor)
    if img is None:
        raise MXNetError("unpack_img: the record's image could not be decoded")
    return header, img


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encodes ``img`` (numpy, BGR as OpenCV's) with OpenCV and packs it with ``header``.

    ``quality`` is the JPEG quality (1-100) or the PNG compression level (0-9).
    """
    cv2 = _require_cv2()
    fmt = img_fmt.upper()
    params = None
    if fmt in (".JPG", ".JPEG"):
        params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    elif fmt == ".PNG":
        params = [cv2.IMWRITE_PNG_COMPRESSION, quality]
    ret, buf = cv2.imencode(img_fmt, np.asarray(img), params)
    if not ret:
        raise MXNetError(f"pack_img: OpenCV failed to encode the image as {img_fmt}")
    return pack(header, buf.tobytes())
