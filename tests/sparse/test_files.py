"""mx.nd.save / load of csr and row_sparse arrays: MXNet 1.9.1's files load, neomx writes the
same bytes, hostile sparse records raise MXNetError."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.ndarray.serialization import to_bytes

from ._golden import GOLDEN, inputs, load

FILES = load("files.json")["files"]


@pytest.fixture(scope="module")
def env():
    return inputs()


@pytest.mark.parametrize("fname", sorted(FILES))
def test_load_mxnet_file(fname):
    loaded = mx.nd.load(str(GOLDEN / fname))
    want = FILES[fname]["arrays"]
    items = loaded.items() if isinstance(loaded, dict) else enumerate(loaded)
    assert len(loaded) == len(want)
    for key, arr in items:
        rec = want[str(key)]
        assert arr.stype == rec["stype"] and type(arr).__name__ == rec["class"]
        assert np.dtype(arr.dtype).name == rec["dtype"]
        np.testing.assert_array_equal(arr.asnumpy(), np.array(rec["value"], dtype=arr.dtype))
        if arr.stype != "default":
            assert arr.indices.asnumpy().tolist() == rec["indices"]
            arr.check_format()
        if arr.stype == "csr":
            assert arr.indptr.asnumpy().tolist() == rec["indptr"]


@pytest.mark.parametrize("fname", sorted(FILES))
def test_save_is_byte_identical(env, fname):
    data = eval(FILES[fname]["expr"], env)  # noqa: S307
    assert to_bytes(data) == (GOLDEN / fname).read_bytes()


def test_round_trip(tmp_path, env):
    path = str(tmp_path / "x.params")
    mx.nd.save(path, {"c": env["c"], "r": env["r"]})
    back = mx.nd.load(path)
    assert back["c"].stype == "csr" and back["r"].stype == "row_sparse"
    np.testing.assert_array_equal(back["c"].asnumpy(), env["D"])
    np.testing.assert_array_equal(back["r"].asnumpy(), env["D"])


def _csr_record_offsets(buf):
    """Byte offsets in csr.params (one 6x5 csr array with 5 values): the stored indptr and
    indices (after the header, storage shape, shape, context, dtype, aux types and shapes)."""
    head = 24 + 4 + 4 + (4 + 8) + (4 + 16) + 12 + 2 * (4 + 4 + 8)
    data = head + 5 * 4
    return head, data, data + 7 * 8


@pytest.mark.parametrize("patch", ["col_out_of_range", "negative_col", "indptr_end", "indptr_start",
                                   "truncated", "nnz_huge", "stype"])
def test_hostile_sparse_files(patch):
    buf = bytearray((GOLDEN / "csr.params").read_bytes())
    _, ptr_at, idx_at = _csr_record_offsets(buf)
    if patch == "col_out_of_range":
        struct.pack_into("<q", buf, idx_at, 5)
    elif patch == "negative_col":
        struct.pack_into("<q", buf, idx_at, -7)
    elif patch == "indptr_end":
        struct.pack_into("<q", buf, ptr_at + 6 * 8, 4)
    elif patch == "indptr_start":
        struct.pack_into("<q", buf, ptr_at, 1)
    elif patch == "truncated":
        buf = buf[:-9]
    elif patch == "nnz_huge":
        struct.pack_into("<q", buf, 24 + 4 + 4 + 4, 1 << 40)  # storage shape (nnz)
    else:
        struct.pack_into("<i", buf, 24 + 4, 7)
    with pytest.raises(MXNetError, match="Invalid NDArray file format"):
        mx.nd.load_frombuffer(bytes(buf))
