"""``NDArrayIter(num_parts, part_index)``: equal contiguous shards (dist_sync needs the same
number of batches on every worker)."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx


def _rows(it):
    return [b.data[0].asnumpy()[:, 0].tolist() for b in it]


def test_even_split_is_contiguous():
    x, y = np.arange(8.0).reshape(8, 1), np.arange(8.0)
    parts = [mx.io.NDArrayIter(x, y, batch_size=2, num_parts=2, part_index=k) for k in (0, 1)]
    assert _rows(parts[0]) == [[0, 1], [2, 3]] and _rows(parts[1]) == [[4, 5], [6, 7]]
    parts[1].reset()
    assert [b.label[0].asnumpy().tolist() for b in parts[1]] == [[4, 5], [6, 7]]
    assert parts[0].provide_data[0].shape == (2, 1)


def test_uneven_split_wraps_so_every_part_has_the_same_batches():
    x = np.arange(10.0).reshape(10, 1)
    got = [_rows(mx.io.NDArrayIter(x, batch_size=2, num_parts=3, part_index=k))
           for k in range(3)]
    assert got == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [0, 1]]]


def test_layout_dtype_and_dict_inputs():
    data = {"b": mx.nd.array(np.arange(12).reshape(3, 4), dtype="int32"),
            "a": np.arange(12.0).reshape(3, 4)}
    it = mx.io.NDArrayIter(data, batch_size=2, layout="TN", num_parts=2, part_index=1)
    batch = next(it)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert batch.data[1].dtype == np.int32
    np.testing.assert_array_equal(batch.data[0].asnumpy(), [[2, 3], [6, 7], [10, 11]])


@pytest.mark.parametrize("k,n", [(2, 2), (-1, 2), (0, 0)])
def test_bad_part(k, n):
    with pytest.raises(mx.MXNetError, match="part_index must be in"):
        mx.io.NDArrayIter(np.zeros((4, 1)), num_parts=n, part_index=k)
