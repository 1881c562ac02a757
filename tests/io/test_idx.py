"""IDX reader/writer: round trips (plain and gzip) and fast, clear failures on bad files."""
from __future__ import annotations

import gzip
import os
import struct
import time
import tracemalloc

import numpy as np
import pytest

from neomx.base import MXNetError
from neomx.io import idx

GOLDEN_IDX = os.path.join(os.path.dirname(__file__), os.pardir, "golden", "io", "idx")


def _images(n=5, rows=28, cols=28, seed=0):
    return np.random.RandomState(seed).randint(0, 256, size=(n, rows, cols)).astype(np.uint8)


def _write_raw(path, data: bytes, compress=False):
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(data)
    return str(path)


def _header(magic, *dims):
    return struct.pack(f">I{len(dims)}I", magic, *dims)


# --- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["imgs-idx3-ubyte", "imgs-idx3-ubyte.gz"])
def test_images_round_trip(tmp_path, name):
    imgs = _images(7, 5, 3)
    path = tmp_path / name
    idx.write_idx_images(path, imgs)
    with open(path, "rb") as f:
        assert (f.read(2) == b"\x1f\x8b") == name.endswith(".gz")
    out = idx.read_idx_images(path)
    assert out.dtype == np.uint8 and out.shape == (7, 5, 3)
    np.testing.assert_array_equal(out, imgs)
    out[0, 0, 0] = 1  # the result is writable (a copy, not a view of the file bytes)


@pytest.mark.parametrize("compress", [False, True])
def test_labels_round_trip(tmp_path, compress):
    labels = np.array([0, 9, 255, 3], np.uint8)
    path = tmp_path / "labels"
    idx.write_idx_labels(path, labels, compress=compress)
    np.testing.assert_array_equal(idx.read_idx_labels(path), labels)


def test_header_layout_is_big_endian(tmp_path):
    path = tmp_path / "x"
    idx.write_idx_images(path, _images(2, 3, 4))
    raw = path.read_bytes()
    assert struct.unpack(">IIII", raw[:16]) == (2051, 2, 3, 4)
    assert len(raw) == 16 + 2 * 3 * 4
    idx.write_idx_labels(path, [1, 2, 3])
    assert path.read_bytes() == struct.pack(">II", 2049, 3) + bytes([1, 2, 3])


def test_gzip_detected_by_content_not_name(tmp_path):
    imgs = _images(3, 4, 4)
    gz_without_suffix = tmp_path / "images"
    idx.write_idx_images(gz_without_suffix, imgs, compress=True)
    plain_with_suffix = tmp_path / "images.gz"
    idx.write_idx_images(plain_with_suffix, imgs, compress=False)
    np.testing.assert_array_equal(idx.read_idx_images(gz_without_suffix), imgs)
    np.testing.assert_array_equal(idx.read_idx_images(plain_with_suffix), imgs)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.float32, np.float64])
def test_generic_types_round_trip(tmp_path, dtype):
    arr = (np.arange(24).reshape(2, 3, 4) - 7).astype(dtype)
    path = tmp_path / "a.idx.gz"
    idx.write_idx(path, arr)
    out = idx.read_idx(path)
    assert out.dtype == np.dtype(dtype) and out.dtype.isnative
    np.testing.assert_array_equal(out, arr)


def test_empty_count_is_valid(tmp_path):
    path = tmp_path / "empty"
    idx.write_idx_images(path, np.zeros((0, 28, 28), np.uint8))
    assert idx.read_idx_images(path).shape == (0, 28, 28)


def test_golden_files_read(tmp_path):
    imgs = idx.read_idx_images(os.path.join(GOLDEN_IDX, "tiny-images-idx3-ubyte"))
    labels = idx.read_idx_labels(os.path.join(GOLDEN_IDX, "tiny-labels-idx1-ubyte"))
    assert imgs.shape == (10, 28, 28) and labels.shape == (10,)
    np.testing.assert_array_equal(imgs[:, 0, 0], np.arange(10))
    np.testing.assert_array_equal(labels, (np.arange(10) * 7) % 10)


def test_write_rejects_unsupported(tmp_path):
    with pytest.raises(MXNetError):
        idx.write_idx(tmp_path / "x", np.zeros(3, np.uint64))
    with pytest.raises(MXNetError):
        idx.write_idx_images(tmp_path / "x", np.zeros((3, 4), np.uint8))


# --- bad files ------------------------------------------------------------------------------
def _bad_files(tmp_path):
    """(id, path, reader, message fragment) for corrupt, truncated and hostile files."""
    img = _images(4, 28, 28)
    good = _header(2051, 4, 28, 28) + img.tobytes()
    p = lambda name: tmp_path / name  # noqa: E731
    zeros_bomb = _header(2049, 10) + bytes(50 << 20)  # 50 MB of zeros behind a 10-label header
    return [
        ("missing", str(p("nope")), idx.read_idx_images, "cannot open"),
        ("empty", _write_raw(p("empty"), b""), idx.read_idx_images, "too short"),
        ("short_header", _write_raw(p("short"), _header(2051, 4)[:3]), idx.read_idx_images, "too short"),
        ("dims_cut", _write_raw(p("dims"), _header(2051, 4)), idx.read_idx_images, "truncated header"),
        ("bad_magic", _write_raw(p("magic"), _header(1234, 4, 28, 28) + img.tobytes()),
         idx.read_idx_images, "bad magic"),
        ("text_file", _write_raw(p("text"), b"hello, world\n" * 10), idx.read_idx_images, "bad magic"),
        ("labels_as_images", _write_raw(p("lbl"), _header(2049, 3) + bytes(3)),
         idx.read_idx_images, "expected 2051"),
        ("images_as_labels", _write_raw(p("img"), good), idx.read_idx_labels, "expected 2049"),
        ("truncated", _write_raw(p("trunc"), good[:-5]), idx.read_idx_images, "but the file has"),
        ("trailing", _write_raw(p("trail"), good + b"xyz"), idx.read_idx_images, "but the file has"),
        ("truncated_gz", _write_raw(p("trunc.gz"), good[:-5], True), idx.read_idx_images, "truncated"),
        ("trailing_gz", _write_raw(p("trail.gz"), good + b"xyz", True), idx.read_idx_images, "trailing"),
        ("huge_count", _write_raw(p("huge"), _header(2051, 10**9, 28, 28) + bytes(100)),
         idx.read_idx_images, "more than the limit"),
        ("huge_count_gz", _write_raw(p("huge.gz"), _header(2051, 10**6, 28, 28) + bytes(100), True),
         idx.read_idx_images, "truncated"),
        ("max_dims", _write_raw(p("maxd"), _header(2051, 2**32 - 1, 2**32 - 1, 2**32 - 1)),
         idx.read_idx_images, "more than the limit"),
        ("zero_rows", _write_raw(p("rows0"), _header(2051, 4, 0, 28)), idx.read_idx_images,
         "implausible image size"),
        ("wide_rows", _write_raw(p("wide"), _header(2051, 1, 1, 100000) + bytes(100000)),
         idx.read_idx_images, "implausible image size"),
        ("zeros_bomb_gz", _write_raw(p("bomb.gz"), zeros_bomb, True), idx.read_idx_labels, "trailing"),
        ("not_gzip_after_magic", _write_raw(p("garbage.gz"), b"\x1f\x8b" + b"\x00" * 64),
         idx.read_idx_images, "corrupt gzip"),
        ("gz_stream_cut", _write_raw(p("cut.gz"), gzip.compress(good)[:200]), idx.read_idx_images,
         "corrupt gzip"),
    ]


def test_bad_files_raise_fast_and_name_the_file(tmp_path):
    for cid, path, reader, fragment in _bad_files(tmp_path):
        tracemalloc.start()
        t0 = time.perf_counter()
        with pytest.raises(MXNetError) as info:
            reader(path)
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        msg = str(info.value)
        assert os.path.basename(path) in msg, (cid, msg)
        assert fragment in msg, (cid, msg)
        assert elapsed < 1.0, (cid, elapsed)
        assert peak < 16 << 20, (cid, peak)  # never more than a few chunks, whatever the header says


def test_gzip_crc_error(tmp_path):
    good = _header(2049, 3) + bytes([1, 2, 3])
    blob = bytearray(gzip.compress(good))
    blob[-8] ^= 0xFF  # corrupt the CRC32 in the trailer
    path = _write_raw(tmp_path / "crc.gz", bytes(blob))
    with pytest.raises(MXNetError, match="crc.gz"):
        idx.read_idx_labels(path)


def test_max_bytes_is_configurable(tmp_path):
    path = tmp_path / "imgs"
    idx.write_idx_images(path, _images(4, 28, 28))
    with pytest.raises(MXNetError, match="limit"):
        idx.read_idx_images(path, max_bytes=1000)
    assert idx.read_idx_images(path, max_bytes=4 * 784).shape == (4, 28, 28)
