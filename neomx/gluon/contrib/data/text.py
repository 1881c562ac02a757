"""WikiText-2 and WikiText-103 (word level) as MXNet 1.9.1's ``gluon.contrib.data.text``.

neomx never downloads: the segment's token file (``wiki.train.tokens``,
``wiki.valid.tokens`` or ``wiki.test.tokens``) must be in ``root``, or the dataset's archive
(``wikitext-2-v1.zip`` / ``wikitext-103-v1.zip``, as MXNet downloads it), whose files are then
extracted into ``root`` as MXNet does. The files are read as they are (MXNet would download
again when a file's SHA-1 differs from the published one).

Each line is split on whitespace, empty lines dropped, ``<eos>`` appended to every line; the
vocabulary (unless one is given) counts the tokens of the file (``count_tokens_from_str``) with
``<eos>`` reserved. Sample ``i`` is (tokens ``[i*seq_len, (i+1)*seq_len)``, the same shifted by
one) as int32 index vectors; the tail that does not fill a sample is dropped.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import zipfile

import numpy as np

from . import _constants as C
from ...data import dataset
from ....contrib import text
from .... import ndarray as nd
from ....base import MXNetError, data_dir

__all__ = ['WikiText2', 'WikiText103']


class _LanguageModelDataset(dataset._DownloadedDataset):  # pylint: disable=abstract-method
    def __init__(self, root, namespace, vocabulary):
        self._vocab = vocabulary
        self._counter = None
        self._namespace = namespace
        super().__init__(root, None)

    @property
    def vocabulary(self):
        """The :class:`~neomx.contrib.text.vocab.Vocabulary` indexing the tokens."""
        return self._vocab

    @property
    def frequencies(self):
        """The token counts (``collections.Counter``) of the file (None with a given vocab)."""
        return self._counter

    def _build_vocab(self, content):
        if not self._counter:
            self._counter = text.utils.count_tokens_from_str(content)
        if not self._vocab:
            self._vocab = text.vocab.Vocabulary(counter=self.frequencies,
                                                reserved_tokens=[C.EOS_TOKEN])


def _extract(archive, root):
    """MXNet's extraction: every file of the zip into ``root`` under its base name (each
    written to a temporary file first, then renamed into place)."""
    try:
        with zipfile.ZipFile(archive, 'r') as zf:
            for member in zf.namelist():
                name = os.path.basename(member)
                if not name:
                    continue
                fd, tmp = tempfile.mkstemp(dir=root, prefix='.' + name + '.')
                try:
                    with zf.open(member) as src, os.fdopen(fd, 'wb') as dst:
                        shutil.copyfileobj(src, dst)
                    os.replace(tmp, os.path.join(root, name))
                except BaseException:
                    if os.path.exists(tmp):
                        os.remove(tmp)
                    raise
    except zipfile.BadZipFile as e:
        raise MXNetError(f"{archive!r} is not a valid zip archive: {e}") from None


class _WikiText(_LanguageModelDataset):

    def _read_batch(self, filename):
        with open(filename, 'r', encoding='utf8') as fin:
            content = fin.read()
        self._build_vocab(content)
        lines = [words for words in (x.strip().split() for x in content.splitlines()) if words]
        tokens = [tok for words in lines for tok in words + [C.EOS_TOKEN] if tok]
        indices = self.vocabulary.to_indices(tokens)
        return (np.array(indices[0:-1], dtype=np.int32), np.array(indices[1:], dtype=np.int32))

    def _get_data(self):
        if self._segment not in self._data_file:
            raise MXNetError(f"{type(self).__name__}: segment must be one of "
                             f"{sorted(self._data_file)}, got {self._segment!r}")
        if not isinstance(self._seq_len, int) or self._seq_len <= 0:
            raise MXNetError(f"{type(self).__name__}: seq_len must be a positive int, got "
                             f"{self._seq_len!r}")
        archive_name = self._archive_file[0]
        data_name = self._data_file[self._segment][0]
        path = os.path.join(self._root, data_name)
        archive = os.path.join(self._root, archive_name)
        if not os.path.isfile(path) and os.path.isfile(archive):
            _extract(archive, self._root)
        if not os.path.isfile(path):
            raise MXNetError(
                f"{type(self).__name__}: {data_name} (segment {self._segment!r}) not found in "
                f"{self._root!r}. neomx does not download datasets: put the {self._namespace} "
                f"token files (wiki.train.tokens, wiki.valid.tokens, wiki.test.tokens) or the "
                f"archive {archive_name} there, or pass root= the folder holding them.")
        data, label = self._read_batch(path)
        usable = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:usable], dtype=data.dtype).reshape((-1, self._seq_len))
        self._label = nd.array(label[:usable], dtype=label.dtype).reshape((-1, self._seq_len))

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 word-level language-modelling dataset (Salesforce research; CC BY-SA).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/wikitext-2
        The folder holding ``wiki.{train,valid,test}.tokens`` (or ``wikitext-2-v1.zip``).
    segment : str, default 'train'
        'train', 'validation' or 'test'.
    vocab : :class:`~neomx.contrib.text.vocab.Vocabulary`, default None
        The vocabulary to index with (e.g. the train segment's); None builds one from the file.
    seq_len : int, default 35
        The length of each sample, regardless of sentence boundaries.
    """

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'wikitext-2'),
                 segment='train', vocab=None, seq_len=35):
        self._archive_file = ('wikitext-2-v1.zip', '3c914d17d80b1459be871a5039ac23e752a53cbe')
        self._data_file = {'train': ('wiki.train.tokens',
                                     '863f29c46ef9d167fff4940ec821195882fe29d1'),
                           'validation': ('wiki.valid.tokens',
                                          '0418625c8b4da6e4b5c7a0b9e78d4ae8f7ee5422'),
                           'test': ('wiki.test.tokens',
                                    'c7b8ce0aa086fb34dab808c5c49224211eb2b172')}
        self._segment = segment
        self._seq_len = seq_len
        super().__init__(root, 'wikitext-2', vocab)


class WikiText103(_WikiText):
    """WikiText-103 word-level language-modelling dataset (Salesforce research; CC BY-SA).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/wikitext-103
        The folder holding ``wiki.{train,valid,test}.tokens`` (or ``wikitext-103-v1.zip``).
    segment : str, default 'train'
        'train', 'validation' or 'test'.
    vocab : :class:`~neomx.contrib.text.vocab.Vocabulary`, default None
        The vocabulary to index with; None builds one from the file.
    seq_len : int, default 35
        The length of each sample, regardless of sentence boundaries.
    """

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'wikitext-103'),
                 segment='train', vocab=None, seq_len=35):
        self._archive_file = ('wikitext-103-v1.zip', '0aec09a7537b58d4bb65362fee27650eeaba625a')
        self._data_file = {'train': ('wiki.train.tokens',
                                     'b7497e2dfe77e72cfef5e3dbc61b7b53712ac211'),
                           'validation': ('wiki.valid.tokens',
                                          'c326ac59dc587676d58c422eb8a03e119582f92b'),
                           'test': ('wiki.test.tokens',
                                    '8a5befc548865cec54ed4273cf87dbbad60d1e47')}
        self._segment = segment
        self._seq_len = seq_len
        super().__init__(root, 'wikitext-103', vocab)
