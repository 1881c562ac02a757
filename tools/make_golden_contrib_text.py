"""Golden values of MXNet 1.9.1's mx.contrib.text, mx.contrib.autograd and mx.misc for
tests/contrib/test_text.py and tests/api/test_small_modules.py.

    tools/mxnet-oracle tools/make_golden_contrib_text.py   # writes tests/golden/contrib_text/
"""
import collections
import json
import os
import tempfile
import warnings

import mxnet as mx
import mxnet.misc
import numpy as np
from mxnet.contrib import text

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "golden",
                   "contrib_text")
SOURCE = " Life is great ! \n life is good . \n Good day is a good day !\n"
# a custom embedding file: a header line, a duplicate, the unknown token's own vector
EMBEDDING_FILE = ("3 2\n<unk> 0.5 0.5\nlife 1 2\nis 3 4\ngood 5 6\nlife 9 9\ngreat -1 -2\n")
EMBEDDING_FILE_2 = "life\t0.1\t1\ngood\t0.2\t2\nday\t0.3\t3\n"


def main():
    g = {"mxnet_version": mx.__version__, "generator": "tools/make_golden_contrib_text.py",
         "source": SOURCE, "embedding_file": EMBEDDING_FILE, "embedding_file_2": EMBEDDING_FILE_2}
    counter = text.utils.count_tokens_from_str(SOURCE, to_lower=True)
    g["counter"] = sorted(counter.items())
    g["counter_case"] = sorted(text.utils.count_tokens_from_str(SOURCE).items())
    vocabs = {}
    for name, kw in {"plain": {}, "capped": {"most_freq_count": 3, "min_freq": 2},
                     "reserved": {"reserved_tokens": ["<pad>", "<bos>"], "unknown_token": "?"}
                     }.items():
        v = text.vocab.Vocabulary(counter, **kw)
        vocabs[name] = v
        g["vocab_" + name] = {"idx_to_token": v.idx_to_token, "len": len(v),
                              "indices": v.to_indices(["is", "good", "zzz", "?"]),
                              "tokens": v.to_tokens([0, 1, 2])}
    with tempfile.TemporaryDirectory() as d:
        p1, p2 = os.path.join(d, "e1.txt"), os.path.join(d, "e2.txt")
        open(p1, "w").write(EMBEDDING_FILE)
        open(p2, "w").write(EMBEDDING_FILE_2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e1 = text.embedding.CustomEmbedding(p1)
            e2 = text.embedding.CustomEmbedding(p2, elem_delim="\t",
                                                init_unknown_vec=mx.nd.ones)
            e3 = text.embedding.CustomEmbedding(p1, vocabulary=vocabs["plain"])
        g["e1"] = {"idx_to_token": e1.idx_to_token, "idx_to_vec": e1.idx_to_vec.asnumpy().tolist(),
                   "vecs": e1.get_vecs_by_tokens(["Life", "is", "nope"],
                                                 lower_case_backup=True).asnumpy().tolist()}
        g["e2"] = {"idx_to_vec": e2.idx_to_vec.asnumpy().tolist(), "vec_len": e2.vec_len}
        g["e3"] = {"idx_to_token": e3.idx_to_token, "idx_to_vec": e3.idx_to_vec.asnumpy().tolist()}
        comp = text.embedding.CompositeEmbedding(vocabs["capped"], [e1, e2])
        g["composite"] = {"idx_to_token": comp.idx_to_token,
                          "idx_to_vec": comp.idx_to_vec.asnumpy().tolist()}
        e1.update_token_vectors(["is", "good"], mx.nd.array([[7, 7], [8, 8]]))
        g["updated"] = e1.idx_to_vec.asnumpy().tolist()
    g["pretrained_glove"] = text.embedding.get_pretrained_file_names("glove")
    g["pretrained_fasttext_count"] = len(text.embedding.get_pretrained_file_names("fasttext"))
    # mx.misc.FactorScheduler
    s = mx.misc.FactorScheduler(step=3, factor=0.5)
    g["factor_scheduler"] = [s(i) for i in range(10)]
    # mx.contrib.autograd
    x = mx.nd.array([[1, 2], [3, 4]])
    y = mx.nd.array([[0.5, -1], [2, 0]])
    grads, loss = mx.contrib.autograd.grad_and_loss(lambda a, b: (a * b + a * a).sum())(x, y)
    g["grad_and_loss"] = {"grads": [gr.asnumpy().tolist() for gr in grads],
                          "loss": float(loss.asscalar())}
    g["grad_argnum"] = mx.contrib.autograd.grad(lambda a, b: a * b, argnum=[1])(x, y)[0].asnumpy().tolist()
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "golden.json"), "w") as f:
        json.dump(g, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
