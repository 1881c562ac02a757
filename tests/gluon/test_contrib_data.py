"""gluon.contrib.data against MXNet 1.9.1 goldens (tests/golden/gluon_contrib_data, written by
tools/make_golden_gluon_contrib_data.py): IntervalSampler, and WikiText2 / WikiText103 read
from tiny local files in WikiText's format (tokenisation, vocabulary, seq_len batching), the
archive extracted as MXNet does, and a clear error when the files are missing."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.contrib.data import IntervalSampler
from neomx.gluon.contrib.data.text import WikiText2, WikiText103

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gluon_contrib_data"
with open(GOLDEN / "contrib_data.json", encoding="utf8") as _f:
    META = json.load(_f)


def check(ds, want):
    assert len(ds) == want["len"]
    assert list(ds.vocabulary.idx_to_token) == want["idx_to_token"]
    if want["frequencies"] is None:
        assert ds.frequencies is None
    else:
        assert dict(ds.frequencies) == want["frequencies"]
    for i in range(len(ds)):
        data, label = ds[i]
        assert isinstance(data, mx.nd.NDArray) and data.dtype == np.int32
        assert data.asnumpy().tolist() == want["data"][i]
        assert label.asnumpy().tolist() == want["label"][i]


@pytest.mark.parametrize("case", META["sampler"], ids=lambda c: str(c["args"]))
def test_interval_sampler(case):
    length, interval, rollover = case["args"]
    s = IntervalSampler(length, interval, rollover=rollover)
    assert list(s) == case["order"]
    assert len(s) == case["len"]


def test_interval_sampler_errors_and_paths():
    with pytest.raises(AssertionError, match="Interval 5 must be smaller than or equal to "
                                             "length 3"):
        IntervalSampler(3, 5)
    assert mx.gluon.contrib.data.IntervalSampler is IntervalSampler
    assert mx.gluon.contrib.data.sampler.IntervalSampler is IntervalSampler
    # with a DataLoader: the batches follow the sampler's order
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(np.arange(10)), batch_size=4,
                                      sampler=IntervalSampler(10, 4))
    assert [b.asnumpy().tolist() for b in loader] == [[0, 4, 8, 1], [5, 9, 2, 6], [3, 7]]


def test_wikitext2_segments():
    root = str(GOLDEN / "wikitext-2")
    want = META["datasets"]
    train = WikiText2(root=root, segment="train", seq_len=7)
    check(train, want["w2_train_7"])
    check(WikiText2(root=root, seq_len=35), want["w2_train_35"])
    check(WikiText2(root=root, segment="validation", vocab=train.vocabulary, seq_len=5),
          want["w2_valid_vocab_5"])
    check(WikiText2(root=root, segment="test", seq_len=4), want["w2_test_4"])


def test_wikitext103_from_archive(tmp_path):
    shutil.copy(GOLDEN / "wikitext-103" / "wikitext-103-v1.zip", tmp_path)
    ds = WikiText103(root=str(tmp_path), segment="validation", seq_len=6)
    check(ds, META["datasets"]["w103_zip_valid_6"])
    assert sorted(p.name for p in tmp_path.iterdir()) == META["extracted"]


def test_wikitext_missing_files(tmp_path):
    with pytest.raises(mx.MXNetError) as info:
        WikiText2(root=str(tmp_path), segment="test")
    msg = str(info.value)
    assert "wiki.test.tokens" in msg and str(tmp_path) in msg and "wikitext-2-v1.zip" in msg
    with pytest.raises(mx.MXNetError, match="wikitext-103-v1.zip"):
        WikiText103(root=str(tmp_path))
    with pytest.raises(mx.MXNetError, match="segment must be one of"):
        WikiText2(root=str(GOLDEN / "wikitext-2"), segment="dev")


def test_wikitext_with_dataloader():
    ds = WikiText2(root=str(GOLDEN / "wikitext-2"), seq_len=7)
    data, label = next(iter(mx.gluon.data.DataLoader(ds, batch_size=3)))
    assert data.shape == (3, 7) and label.shape == (3, 7)
    # the label is the data shifted by one token
    flat_d = np.concatenate([ds[i][0].asnumpy() for i in range(len(ds))])
    flat_l = np.concatenate([ds[i][1].asnumpy() for i in range(len(ds))])
    np.testing.assert_array_equal(flat_d[1:], flat_l[:-1])


def test_doc_examples():
    import doctest
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    for test in finder.find(mx.gluon.contrib.data.sampler):
        if test.examples:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 2
