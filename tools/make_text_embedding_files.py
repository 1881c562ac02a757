"""Writes neomx/contrib/text/_pretrained_files.py from MXNet 1.9.1's
mxnet/contrib/text/_constants.py: the pretrained GloVe and fastText file names with their SHA-1
sums (file and archive), which neomx checks on files placed by hand (it downloads nothing).

    tools/mxnet-oracle tools/make_text_embedding_files.py
"""
import json
import os

import mxnet
from mxnet.contrib.text import _constants as C

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "neomx", "contrib",
                   "text", "_pretrained_files.py")
data = {"mxnet_version": mxnet.__version__, "generator": "tools/make_text_embedding_files.py",
        "apache_repo_url": C.APACHE_REPO_URL,
        # (MXNet's GloVe swaps the two tables' names: its file table is GLOVE_PRETRAINED_ARCHIVE_SHA1)
        "glove": {"files": C.GLOVE_PRETRAINED_ARCHIVE_SHA1, "archives": C.GLOVE_PRETRAINED_FILE_SHA1},
        "fasttext": {"files": C.FAST_TEXT_FILE_SHA1, "archives": C.FAST_TEXT_ARCHIVE_SHA1}}
with open(out, "w") as f:  # a module, not package data: it ships with every install
    f.write('"""MXNet 1.9.1\'s pretrained token embedding files and SHA-1 sums (written by '
            'tools/make_text_embedding_files.py; MXNet\'s order)."""\n')
    f.write("PRETRAINED = %s\n" % json.dumps(data, indent=0))
print(out, len(data["glove"]["files"]), len(data["fasttext"]["files"]))
