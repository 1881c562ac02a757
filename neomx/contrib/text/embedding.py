"""Text token embeddings (``mx.contrib.text.embedding``).

A token embedding is a ``Vocabulary`` whose tokens each have a vector (``idx_to_vec``, one row
per index; row 0 the unknown token's). ``CustomEmbedding`` reads any file of lines
``token<delim>v1<delim>v2...``; ``GloVe`` and ``FastText`` read MXNet's pretrained files. neomx
downloads nothing: a pretrained file must be placed at
``<embedding_root>/<glove|fasttext>/<pretrained_file_name>`` (the error names the path and the
URL MXNet downloads it from, and the file's SHA-1 is checked as MXNet checks it).
"""
from __future__ import annotations

import hashlib
import logging
import os
import warnings

from ... import ndarray as nd
from ... import registry
from ...base import data_dir
from . import vocab
from .vocab import UNKNOWN_IDX

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

from ._pretrained_files import PRETRAINED as _PRETRAINED  # MXNet 1.9.1's file names, SHA-1s


def register(embedding_cls):
    """Registers a new token embedding (a subclass of ``_TokenEmbedding``) for ``create``."""
    return registry.get_register_func(_TokenEmbedding, "token embedding")(embedding_cls)


def create(embedding_name, **kwargs):
    """Creates an instance of token embedding ``embedding_name`` ('glove', 'fasttext' or a
    registered one; case-insensitive) with the constructor's ``kwargs``."""
    return registry.get_create_func(_TokenEmbedding, "token embedding")(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pretrained file names of ``embedding_name``, or a dict of them per embedding name.

    Examples
    --------
    >>> import neomx as mx
    >>> 'glove.6B.50d.txt' in mx.contrib.text.embedding.get_pretrained_file_names('glove')
    True
    """
    text_embedding_reg = registry.get_registry(_TokenEmbedding)
    if embedding_name is not None:
        if embedding_name not in text_embedding_reg:
            raise KeyError("Cannot find `embedding_name` %s. Use "
                           "`get_pretrained_file_names(embedding_name=None).keys()` to get all "
                           "the valid embedding names." % embedding_name)
        return list(text_embedding_reg[embedding_name].pretrained_file_name_sha1.keys())
    return {name: list(cls.pretrained_file_name_sha1.keys())
            for name, cls in text_embedding_reg.items()}


def _sha1(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class _TokenEmbedding(vocab.Vocabulary):
    """Token embedding base class: a vocabulary with ``idx_to_vec`` and ``vec_len``."""

    pretrained_file_name_sha1: dict = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        repo_url = os.environ.get("MXNET_GLUON_REPO", _PRETRAINED["apache_repo_url"])
        return "{}gluon/embeddings/{}/{}".format(repo_url, cls.__name__.lower(),
                                                 cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The path of the placed pretrained file (checked by SHA-1); never downloads."""
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        url = cls._get_pretrained_file_url(pretrained_file_name)
        if not os.path.exists(path):
            raise FileNotFoundError(
                "pretrained token embedding file %s not found: neomx downloads nothing; place "
                "the file at %s (MXNet 1.9.1 downloads %s and extracts it there)"
                % (pretrained_file_name, path, url))
        expected = cls.pretrained_file_name_sha1[pretrained_file_name]
        if _sha1(path) != expected:
            raise ValueError("%s does not have the SHA-1 %s of MXNet's %s (from %s): replace it "
                             "with that file" % (path, expected, pretrained_file_name, url))
        return path

    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding="utf8"):
        """Index the tokens of a ``token<delim>v1<delim>...`` file and load their vectors.

        The unknown token's vector comes from the file when it has one, else from
        ``init_unknown_vec(shape=vec_len)``; repeated tokens and 1-element lines (headers) are
        skipped with a warning, as MXNet.
        """
        pretrained_file_path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(pretrained_file_path):
            raise ValueError("`pretrained_file_path` must be a valid path to the pre-trained "
                             "token embedding file.")
        logging.info("Loading pre-trained token embedding vectors from %s", pretrained_file_path)
        vec_len = None
        all_elems = []
        tokens = set()
        loaded_unknown_vec = None
        with open(pretrained_file_path, "r", encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                assert len(elems) > 1, (
                    "At line %d of the pre-trained text embedding file: the data format of the "
                    "pre-trained token embedding file %s is unexpected."
                    % (line_num, pretrained_file_path))
                token, elems = elems[0], [float(i) for i in elems[1:]]
                if token == self.unknown_token and loaded_unknown_vec is None:
                    loaded_unknown_vec = elems
                    tokens.add(self.unknown_token)
                elif token in tokens:
                    warnings.warn("At line %d of the pre-trained token embedding file: the "
                                  "embedding vector for token %s has been loaded and a duplicate "
                                  "embedding for the  same token is seen and skipped."
                                  % (line_num, token))
                elif len(elems) == 1:
                    warnings.warn("At line %d of the pre-trained text embedding file: token %s "
                                  "with 1-dimensional vector %s is likely a header and is "
                                  "skipped." % (line_num, token, elems))
                else:
                    if vec_len is None:
                        vec_len = len(elems)
                        all_elems.extend([0] * vec_len)  # the unknown token's row
                    else:
                        assert len(elems) == vec_len, (
                            "At line %d of the pre-trained token embedding file: the dimension "
                            "of token %s is %d but the dimension of previous tokens is %d. "
                            "Dimensions of all the tokens must be the same."
                            % (line_num, token, len(elems), vec_len))
                    all_elems.extend(elems)
                    self._idx_to_token.append(token)
                    self._token_to_idx[token] = len(self._idx_to_token) - 1
                    tokens.add(token)
        self._vec_len = vec_len
        self._idx_to_vec = nd.array(all_elems).reshape((-1, self.vec_len))
        if loaded_unknown_vec is None:
            self._idx_to_vec[UNKNOWN_IDX] = init_unknown_vec(shape=self.vec_len)
        else:
            self._idx_to_vec[UNKNOWN_IDX] = nd.array(loaded_unknown_vec)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = vocabulary.token_to_idx.copy()
        self._idx_to_token = vocabulary.idx_to_token[:]
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = (vocabulary.reserved_tokens[:]
                                 if vocabulary.reserved_tokens is not None else None)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """The vectors of ``vocab_idx_to_token``: the embeddings' vectors side by side."""
        new_vec_len = sum(embed.vec_len for embed in token_embeddings)
        new_idx_to_vec = nd.zeros(shape=(vocab_len, new_vec_len))
        col_start = 0
        for embed in token_embeddings:
            col_end = col_start + embed.vec_len
            new_idx_to_vec[0, col_start:col_end] = embed.idx_to_vec[0]
            new_idx_to_vec[1:, col_start:col_end] = embed.get_vecs_by_tokens(vocab_idx_to_token[1:])
            col_start = col_end
        self._vec_len = new_vec_len
        self._idx_to_vec = new_idx_to_vec

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is not None:
            assert isinstance(vocabulary, vocab.Vocabulary), \
                "The argument `vocabulary` must be an instance of " \
                "mxnet.contrib.text.vocab.Vocabulary."
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        return self._vec_len

    @property
    def idx_to_vec(self):
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token, or the (len(tokens), vec_len) vectors of a list of tokens
        (unknown tokens get the unknown vector; ``lower_case_backup`` tries the lower case)."""
        to_reduce = not isinstance(tokens, list)
        if to_reduce:
            tokens = [tokens]
        if not lower_case_backup:
            indices = [self.token_to_idx.get(token, UNKNOWN_IDX) for token in tokens]
        else:
            indices = [self.token_to_idx[token] if token in self.token_to_idx
                       else self.token_to_idx.get(token.lower(), UNKNOWN_IDX)
                       for token in tokens]
        vecs = nd.Embedding(nd.array(indices), self.idx_to_vec, self.idx_to_vec.shape[0],
                            self.idx_to_vec.shape[1])
        return vecs[0] if to_reduce else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Replace the vectors of known ``tokens`` by ``new_vectors`` (ValueError for unknown
        tokens unless the unknown token is named)."""
        assert self.idx_to_vec is not None, "The property `idx_to_vec` has not been properly set."
        if not isinstance(tokens, list) or len(tokens) == 1:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in [1, 2], \
                "`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is a singleton."
            if not isinstance(tokens, list):
                tokens = [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = nd.expand_dims(new_vectors, axis=0)
        else:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2, \
                "`new_vectors` must be a 2-D NDArray if `tokens` is a list of multiple strings."
        assert new_vectors.shape == (len(tokens), self.vec_len), \
            "The length of new_vectors must be equal to the number of tokens and the width of" \
            "new_vectors must be equal to the dimension of embeddings of the glossary."
        indices = []
        for token in tokens:
            if token not in self.token_to_idx:
                raise ValueError("Token %s is unknown. To update the embedding vector for an "
                                 "unknown token, please specify it explicitly as the "
                                 "`unknown_token` %s in `tokens`. This is to avoid unintended "
                                 "updates." % (token, self.idx_to_token[UNKNOWN_IDX]))
            indices.append(self.token_to_idx[token])
        self._idx_to_vec[nd.array(indices)] = new_vectors

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        embedding_name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError("Cannot find pretrained file %s for token embedding %s. Valid "
                           "pretrained files for embedding %s: %s"
                           % (pretrained_file_name, embedding_name, embedding_name,
                              ", ".join(cls.pretrained_file_name_sha1.keys())))


_EMBEDDING_ROOT = os.path.join(data_dir(), "embeddings")


@register
class GloVe(_TokenEmbedding):
    """The GloVe word embedding (Pennington et al., 2014) from a placed pretrained file
    (``get_pretrained_file_names('glove')``; see the module docstring)."""

    pretrained_archive_name_sha1 = _PRETRAINED["glove"]["archives"]
    pretrained_file_name_sha1 = _PRETRAINED["glove"]["files"]

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        src_archive = {archive.split(".")[1]: archive
                       for archive in GloVe.pretrained_archive_name_sha1.keys()}
        return src_archive[pretrained_file_name.split(".")[1]]

    def __init__(self, pretrained_file_name="glove.840B.300d.txt", embedding_root=_EMBEDDING_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText word embedding (Bojanowski et al., 2016) from a placed pretrained file
    (``get_pretrained_file_names('fasttext')``; see the module docstring)."""

    pretrained_archive_name_sha1 = _PRETRAINED["fasttext"]["archives"]
    pretrained_file_name_sha1 = _PRETRAINED["fasttext"]["files"]

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return ".".join(pretrained_file_name.split(".")[:-1]) + ".zip"

    def __init__(self, pretrained_file_name="wiki.simple.vec", embedding_root=_EMBEDDING_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        FastText._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = FastText._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """User-defined token embedding from a file of ``token<elem_delim>v1<elem_delim>v2...``
    lines.

    Parameters
    ----------
    pretrained_file_path : str
        The path to the custom pre-trained token embedding file.
    elem_delim : str, default ' '
        The delimiter for splitting a token and every embedding vector element value on the same
        line of the custom pre-trained token embedding file.
    encoding : str, default 'utf8'
        The encoding scheme for reading the custom pre-trained token embedding file.
    init_unknown_vec : callback
        The callback used to initialize the embedding vector for the unknown token.
    vocabulary : :class:`~mxnet.contrib.text.vocab.Vocabulary`, default None
        If not None, index the vocabulary's tokens (with the file's vectors) instead.
    """

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """A vocabulary's tokens with the concatenated vectors of one or more token embeddings."""

    def __init__(self, vocabulary, token_embeddings):
        assert isinstance(vocabulary, vocab.Vocabulary), \
            "The argument `vocabulary` must be an instance of " \
            "mxnet.contrib.text.indexer.Vocabulary."
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            assert isinstance(embed, _TokenEmbedding), \
                "The argument `token_embeddings` must be an instance or a list of instances of " \
                "`mxnet.contrib.text.embedding.TextEmbedding` whose embedding vectors will be" \
                "loaded or concatenated-then-loaded to map to the indexed tokens."
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
