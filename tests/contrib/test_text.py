"""mx.contrib.text against MXNet 1.9.1's values (tools/make_golden_contrib_text.py): token
counts, Vocabulary indexing, CustomEmbedding/CompositeEmbedding vectors, update_token_vectors,
and pretrained embeddings (placed files only; the error names the file to place)."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.contrib import text

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "contrib_text" / "golden.json")
                    .read_text())


def counter():
    return text.utils.count_tokens_from_str(GOLDEN["source"], to_lower=True)


def test_count_tokens():
    assert sorted(counter().items()) == [tuple(x) for x in GOLDEN["counter"]]
    assert sorted(text.utils.count_tokens_from_str(GOLDEN["source"]).items()) == \
        [tuple(x) for x in GOLDEN["counter_case"]]
    c = collections.Counter({"life": 5})
    assert text.utils.count_tokens_from_str("life is", counter_to_update=c) is c
    assert c["life"] == 6


@pytest.mark.parametrize("name, kw", [
    ("plain", {}), ("capped", {"most_freq_count": 3, "min_freq": 2}),
    ("reserved", {"reserved_tokens": ["<pad>", "<bos>"], "unknown_token": "?"})])
def test_vocabulary(name, kw):
    v = text.vocab.Vocabulary(counter(), **kw)
    g = GOLDEN["vocab_" + name]
    assert v.idx_to_token == g["idx_to_token"] and len(v) == g["len"]
    assert v.to_indices(["is", "good", "zzz", "?"]) == g["indices"]
    assert v.to_tokens([0, 1, 2]) == g["tokens"]
    assert all(v.token_to_idx[t] == i for i, t in enumerate(v.idx_to_token))


def test_vocabulary_errors():
    with pytest.raises(AssertionError, match="`min_freq` must be set to a positive value"):
        text.vocab.Vocabulary(min_freq=0)
    with pytest.raises(AssertionError, match="cannot contain `unknown_token`"):
        text.vocab.Vocabulary(reserved_tokens=["<unk>"])
    with pytest.raises(AssertionError, match="duplicate reserved tokens"):
        text.vocab.Vocabulary(reserved_tokens=["a", "a"])
    with pytest.raises(AssertionError, match="collections.Counter"):
        text.vocab.Vocabulary({"a": 1})
    with pytest.raises(ValueError, match="Token index 9 in the provided `indices` is invalid"):
        text.vocab.Vocabulary().to_tokens(9)


@pytest.fixture
def files(tmp_path):
    p1, p2 = tmp_path / "e1.txt", tmp_path / "e2.txt"
    p1.write_text(GOLDEN["embedding_file"])
    p2.write_text(GOLDEN["embedding_file_2"])
    return str(p1), str(p2)


def test_custom_and_composite_embedding(files):
    p1, p2 = files
    with pytest.warns(UserWarning):  # the header line and the duplicate token
        e1 = text.embedding.CustomEmbedding(p1)
    e2 = text.embedding.CustomEmbedding(p2, elem_delim="\t", init_unknown_vec=mx.nd.ones)
    with pytest.raises(AssertionError, match="customembedding is not registered"):
        text.embedding.create("CustomEmbedding", pretrained_file_path=p2)  # as MXNet
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e3 = text.embedding.CustomEmbedding(p1, vocabulary=text.vocab.Vocabulary(counter()))
    assert e1.idx_to_token == GOLDEN["e1"]["idx_to_token"] and e1.vec_len == 2
    np.testing.assert_allclose(e1.idx_to_vec.asnumpy(), GOLDEN["e1"]["idx_to_vec"])
    np.testing.assert_allclose(
        e1.get_vecs_by_tokens(["Life", "is", "nope"], lower_case_backup=True).asnumpy(),
        GOLDEN["e1"]["vecs"])
    np.testing.assert_allclose(e1.get_vecs_by_tokens("good").asnumpy(), [5, 6])
    np.testing.assert_allclose(e2.idx_to_vec.asnumpy(), GOLDEN["e2"]["idx_to_vec"], rtol=1e-6)
    assert e3.idx_to_token == GOLDEN["e3"]["idx_to_token"]
    np.testing.assert_allclose(e3.idx_to_vec.asnumpy(), GOLDEN["e3"]["idx_to_vec"])
    comp = text.embedding.CompositeEmbedding(
        text.vocab.Vocabulary(counter(), most_freq_count=3, min_freq=2), [e1, e2])
    assert comp.idx_to_token == GOLDEN["composite"]["idx_to_token"]
    np.testing.assert_allclose(comp.idx_to_vec.asnumpy(), GOLDEN["composite"]["idx_to_vec"],
                               rtol=1e-6)
    e1.update_token_vectors(["is", "good"], mx.nd.array([[7, 7], [8, 8]]))
    np.testing.assert_allclose(e1.idx_to_vec.asnumpy(), GOLDEN["updated"])
    with pytest.raises(ValueError, match="Token nope is unknown"):
        e1.update_token_vectors("nope", mx.nd.array([1, 1]))


def test_custom_embedding_bad_files(tmp_path):
    with pytest.raises(ValueError, match="must be a valid path"):
        text.embedding.CustomEmbedding(str(tmp_path / "missing.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1 2 3\n")
    with pytest.raises(AssertionError, match="the dimension of token b is 3"):
        text.embedding.CustomEmbedding(str(bad))


def test_pretrained_file_names():
    assert text.embedding.get_pretrained_file_names("glove") == GOLDEN["pretrained_glove"]
    assert len(text.embedding.get_pretrained_file_names("fasttext")) == \
        GOLDEN["pretrained_fasttext_count"]
    assert set(text.embedding.get_pretrained_file_names()) >= {"glove", "fasttext"}
    with pytest.raises(KeyError, match="Cannot find `embedding_name` nope"):
        text.embedding.get_pretrained_file_names("nope")
    with pytest.raises(KeyError, match="Cannot find pretrained file x.txt for token embedding "
                                       "glove"):
        text.embedding.GloVe("x.txt")


def test_pretrained_needs_a_placed_file(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                              embedding_root=str(tmp_path))
    msg = str(e.value)
    assert str(tmp_path / "glove" / "glove.6B.50d.txt") in msg and "glove.6B.zip" in msg
    # a placed file is checked against MXNet's SHA-1
    (tmp_path / "fasttext").mkdir()
    (tmp_path / "fasttext" / "wiki.simple.vec").write_text("a 1 2\n")
    with pytest.raises(ValueError, match="does not have the SHA-1"):
        text.embedding.FastText(embedding_root=str(tmp_path))


def test_pretrained_loads_a_placed_file(tmp_path, monkeypatch):
    body = "the 1 2 3\nof 4 5 6\n"
    (tmp_path / "glove").mkdir()
    (tmp_path / "glove" / "glove.6B.50d.txt").write_text(body)
    monkeypatch.setitem(text.embedding.GloVe.pretrained_file_name_sha1, "glove.6B.50d.txt",
                        hashlib.sha1(body.encode()).hexdigest())
    e = text.embedding.GloVe("glove.6B.50d.txt", embedding_root=str(tmp_path))
    assert e.idx_to_token == ["<unk>", "the", "of"] and e.vec_len == 3


def test_register_a_new_embedding(files):
    @text.embedding.register
    class MyEmbed(text.embedding.CustomEmbedding):
        pretrained_file_name_sha1 = {"mine.txt": "0"}
    e = text.embedding.create("myembed", pretrained_file_path=files[1], elem_delim="\t")
    assert isinstance(e, MyEmbed)
    assert text.embedding.get_pretrained_file_names("myembed") == ["mine.txt"]
