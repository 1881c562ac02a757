"""mx.io.ImageRecordUInt8Iter_v1: ImageRecordIter_v1's batches (pad, record ids in index) with
uint8 pixels. Expected values from MXNet 1.9.1 on tests/golden/image_record_iter/data/a.rec
(10 records, labels 0..9, ids 100..109)."""
from pathlib import Path

import numpy as np

import neomx as mx

DATA = Path(__file__).resolve().parents[1] / "golden" / "image_record_iter" / "data"
# per epoch, per batch: pad, index, label, sum of the uint8 pixels (MXNet 1.9.1; the round
# batch's wrapped records are skipped by the next epoch, as ImageRecordIter_v1's)
EXPECTED = [[(0, [100, 101, 102, 103], [0, 1, 2, 3], 1024239),
             (0, [104, 105, 106, 107], [4, 5, 6, 7], 1062843),
             (2, [108, 109, 100, 101], [8, 9, 0, 1], 1049606)],
            [(0, [102, 103, 104, 105], [2, 3, 4, 5], 1052322),
             (0, [106, 107, 108, 109], [6, 7, 8, 9], 1037416)]]


def test_uint8_v1_batches_as_mxnet():
    it = mx.io.ImageRecordUInt8Iter_v1(path_imgrec=str(DATA / "a.rec"), data_shape=(3, 24, 24),
                                       batch_size=4)
    assert it.provide_data[0].dtype == np.uint8 and it.provide_data[0].shape == (4, 3, 24, 24)
    assert it.provide_label[0].dtype == np.float32
    for expected in EXPECTED:
        got = [(b.pad, list(b.index), b.label[0].asnumpy().tolist(), b.data[0].dtype,
                int(b.data[0].asnumpy().astype(np.int64).sum())) for b in it]
        assert got == [(p, i, [float(x) for x in lab], np.uint8, s)
                       for p, i, lab, s in expected]
        it.reset()


def test_uint8_v1_is_a_v1_iterator():
    assert issubclass(mx.io.ImageRecordUInt8Iter_v1, mx.io.ImageRecordIter_v1)
