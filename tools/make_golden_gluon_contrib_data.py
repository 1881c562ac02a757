#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``gluon.contrib.data``: ``IntervalSampler`` and the
WikiText datasets read from tiny local files.

Run it with the real MXNet, from the repository root::

    tools/mxnet-oracle tools/make_golden_gluon_contrib_data.py

Output goes to ``tests/golden/gluon_contrib_data/``:

* ``wikitext-2/wiki.{train,valid,test}.tokens``  tiny files in WikiText's format (headings,
  blank lines, ``@-@`` tokens, a tab, non-ASCII words)
* ``wikitext-103/wikitext-103-v1.zip``  the same three files in a zip under a
  ``wikitext-103/`` folder, as the published archive is laid out
* ``contrib_data.json``  sampler orders and lengths; for each dataset case the vocabulary
  (idx_to_token), the token counts, len() and every sample's data and label

MXNet downloads when a file's SHA-1 differs from the published one (and when it is absent):
here ``check_sha1`` is patched to accept the local files and ``download`` to hand back the
local zip, so MXNet reads exactly these files (and extracts the zip itself).
"""
import os
import shutil
import tempfile
import zipfile

from _oracle_common import golden_dir, write_json

import mxnet as mx
from mxnet.gluon.contrib.data import text as mx_text

OUT = golden_dir('gluon_contrib_data')

TRAIN = """ 
 = Valkyria Chronicles III = 
 
 Senjō no Valkyria 3 : Unrecorded Chronicles ( Japanese : 戦場のヴァルキュリア3 ) is a game . 
 The game began development in 2010 , carrying over a large portion of the work . 
 
 = = Gameplay = = 
 
 As with previous games , the 3 @-@ D game is played in the same way . 
 The game 's\tbattle system is the same as the previous game . 
"""
VALID = """ 
 = Homarus gammarus = 
 
 Homarus gammarus is a species of clawed lobster from the eastern Atlantic Ocean . 
 The game is not a lobster . 
"""
TEST = """ 
 = Robert Boulter = 
 
 Robert Boulter is an English film , television and theatre actor . 
"""
FILES = {'wiki.train.tokens': TRAIN, 'wiki.valid.tokens': VALID, 'wiki.test.tokens': TEST}


def write_files():
    w2 = os.path.join(OUT, 'wikitext-2')
    os.makedirs(w2, exist_ok=True)
    for name, content in FILES.items():
        with open(os.path.join(w2, name), 'w', encoding='utf8') as f:
            f.write(content)
    w103 = os.path.join(OUT, 'wikitext-103')
    os.makedirs(w103, exist_ok=True)
    with zipfile.ZipFile(os.path.join(w103, 'wikitext-103-v1.zip'), 'w') as zf:
        zf.writestr('wikitext-103/', '')
        for name, content in FILES.items():
            zf.writestr('wikitext-103/' + name, content.encode('utf8'))


def dataset_record(ds):
    return {'len': len(ds),
            'idx_to_token': list(ds.vocabulary.idx_to_token),
            'frequencies': None if ds.frequencies is None else dict(ds.frequencies),
            'data': [ds[i][0].asnumpy().tolist() for i in range(len(ds))],
            'label': [ds[i][1].asnumpy().tolist() for i in range(len(ds))],
            'dtype': str(ds[0][0].dtype.__name__) if len(ds) else None}


def main():
    os.makedirs(OUT, exist_ok=True)
    write_files()
    mx_text.check_sha1 = lambda path, sha1: True
    tmp = tempfile.mkdtemp()
    try:
        def fake_download(url, path=None, sha1_hash=None, **kw):
            return os.path.join(path, os.path.basename(url))
        mx_text.download = fake_download
        res = {'generator': 'tools/make_golden_gluon_contrib_data.py',
               'sampler': [], 'datasets': {}}
        for length, interval, rollover in ((13, 3, True), (13, 3, False), (5, 5, True),
                                           (6, 1, False), (10, 4, True), (10, 4, False)):
            s = mx.gluon.contrib.data.IntervalSampler(length, interval, rollover=rollover)
            res['sampler'].append({'args': [length, interval, rollover], 'order': list(s),
                                   'len': len(s)})
        w2 = os.path.join(OUT, 'wikitext-2')
        train = mx.gluon.contrib.data.text.WikiText2(root=w2, segment='train', seq_len=7)
        res['datasets']['w2_train_7'] = dataset_record(train)
        res['datasets']['w2_train_35'] = dataset_record(
            mx.gluon.contrib.data.text.WikiText2(root=w2, seq_len=35))
        res['datasets']['w2_valid_vocab_5'] = dataset_record(
            mx.gluon.contrib.data.text.WikiText2(root=w2, segment='validation',
                                                 vocab=train.vocabulary, seq_len=5))
        res['datasets']['w2_test_4'] = dataset_record(
            mx.gluon.contrib.data.text.WikiText2(root=w2, segment='test', seq_len=4))
        # WikiText-103 from its archive only (copied: MXNet extracts into root)
        shutil.copy(os.path.join(OUT, 'wikitext-103', 'wikitext-103-v1.zip'), tmp)
        ds = mx.gluon.contrib.data.text.WikiText103(root=tmp, segment='validation', seq_len=6)
        res['datasets']['w103_zip_valid_6'] = dataset_record(ds)
        res['extracted'] = sorted(os.listdir(tmp))
        write_json(os.path.join(OUT, 'contrib_data.json'), res, ensure_ascii=False)
    finally:
        shutil.rmtree(tmp)


if __name__ == '__main__':
    main()
