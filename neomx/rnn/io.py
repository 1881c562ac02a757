"""Sentence data for recurrent networks (MXNet 1.9.1's ``mx.rnn.io``): encoding words as ids
and a bucketing iterator for ``BucketingModule``."""
from __future__ import annotations

import bisect
import random

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0,
                     unknown_token=None):
    """Encode sentences (lists of words) as lists of integer ids, growing ``vocab``.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str to int, optional
        A new vocabulary ``{invalid_key: invalid_label}`` when None; a given one must hold
        every word unless ``unknown_token`` is set.
    invalid_label : int, default -1
    invalid_key : str, default '\\n'
    start_label : int, default 0
    unknown_token : str, optional

    Returns
    -------
    (list of list of int, dict)

    Examples
    --------
    >>> import neomx as mx
    >>> mx.rnn.encode_sentences([['a', 'b'], ['b', 'c']], invalid_label=0, start_label=1)
    ([[1, 2], [2, 3]], {'\\n': 0, 'a': 1, 'b': 2, 'c': 3})
    """
    idx = start_label
    if vocab is None:
        vocab = {invalid_key: invalid_label}
        new_vocab = True
    else:
        new_vocab = False
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                assert new_vocab or unknown_token, "Unknown token %s" % word
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of equally long (padded) sentences, one bucket per batch; labels are the data
    shifted by one step. Each batch's ``bucket_key`` is its bucket's length.

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        Default: every length with at least ``batch_size`` sentences.
    invalid_label : int, default -1
        The padding (and the last label).
    data_name, label_name : str
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name="data",
                 label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__()
        if not buckets:
            buckets = [i for i, j in enumerate(np.bincount([len(s) for s in sentences]))
                       if j >= batch_size]
        buckets.sort()
        ndiscard = 0
        self.data = [[] for _ in buckets]
        valid = {i: 0 for i in range(len(buckets))}
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            valid[buck] = 1
            if buck == len(buckets):
                ndiscard += 1
                continue
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            self.data[buck].append(buff)
        buckets = [j for i, j in enumerate(buckets) if valid[i] == 1]
        self.data = [np.asarray(i, dtype=dtype) for i in self.data if i]
        print("WARNING: discarded %d sentences longer than the largest bucket." % ndiscard)

        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(buckets)
        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError("Invalid layout %s: Must by NT (batch major) or TN (time major)")
        self.provide_data = [DataDesc(name=self.data_name, shape=shape, layout=self.layout)]
        self.provide_label = [DataDesc(name=self.label_name, shape=shape, layout=self.layout)]
        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend([(i, j) for j in range(0, len(buck) - batch_size + 1, batch_size)])
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Shuffle the batches (python's ``random``) and each bucket (numpy's)."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata = []
        self.ndlabel = []
        for buck in self.data:
            label = np.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(buck, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next batch (StopIteration at the end)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        if self.major_axis == 1:
            data = self.nddata[i][j:j + self.batch_size].T
            label = self.ndlabel[i][j:j + self.batch_size].T
        else:
            data = self.nddata[i][j:j + self.batch_size]
            label = self.ndlabel[i][j:j + self.batch_size]
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
