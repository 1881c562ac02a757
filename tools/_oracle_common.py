"""Set-up shared by the golden generators ``tools/make_golden_*.py``.

The generators run inside the MXNet 1.9.1 oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_<name>.py

so only mxnet, numpy and the stdlib are available here (no neomx, no torch). A script's own
folder is first on ``sys.path``, so they import this file as ``_oracle_common``. Import it
before ``mxnet``: it sets ``MXNET_SUBGRAPH_VERBOSE=0`` (unless already set) before loading
MXNet.
"""
import contextlib
import json
import os
import re
import zlib
from collections import OrderedDict

os.environ.setdefault('MXNET_SUBGRAPH_VERBOSE', '0')

import numpy as np  # noqa: E402
import mxnet as mx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F32 = np.float32
SENTINEL = 12345.0


def golden_dir(name):
    """``tests/golden/<name>`` (resolved relative to this file, not the working directory)."""
    return os.path.join(ROOT, 'tests', 'golden', name)


# ----------------------------------------------------------------------------- inputs

def rng_for(key):
    """A RandomState seeded by the CRC32 of ``key`` (stable across runs and case order)."""
    return np.random.RandomState(zlib.crc32(key.encode()) & 0x7FFFFFFF)


def U(r, shape, lo=-1.0, hi=1.0):
    return r.uniform(lo, hi, shape).astype(F32)


def ints(r, shape, lo, hi, dtype=F32):
    return r.randint(lo, hi, shape).astype(dtype)


# ----------------------------------------------------------------------------- records

def jsonable(v):
    """Tuples -> lists, numpy scalars and arrays -> python values."""
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


TIMESTAMP = re.compile(r'\[\d\d:\d\d:\d\d\] ')
LOCATION = re.compile(r'\[HH:MM:SS\] \S+:\d+: ')


def mask_timestamps(text):
    """MXNet log timestamps replaced by ``[HH:MM:SS]`` (so the output is reproducible)."""
    return TIMESTAMP.sub('[HH:MM:SS] ', text)


def err_info(e, bases=None):
    """Error record. 'error' is str(e) with log timestamps replaced by [HH:MM:SS];
    'error_message' is the part after the last 'MXNetError: ' with '[HH:MM:SS] file:line: '
    prefixes removed and surrounding whitespace stripped. With ``bases`` (exception classes),
    'error_is' lists the names of those ``e`` is an instance of."""
    text = mask_timestamps(str(e))
    msg = text.rsplit('MXNetError: ', 1)[-1]
    msg = LOCATION.sub('', msg).strip()
    info = OrderedDict([('error_type', type(e).__name__)])
    if bases is not None:
        info['error_is'] = [c.__name__ for c in bases if isinstance(e, c)]
    info['error'] = text
    info['error_message'] = msg
    return info


def write_json(path, obj, **kwargs):
    """``obj`` as JSON (``indent=1``, plus ``kwargs`` for ``json.dump``) and a final newline."""
    with open(path, 'w') as f:
        json.dump(obj, f, indent=1, **kwargs)
        f.write('\n')


# ----------------------------------------------------------------------------- symbols

@contextlib.contextmanager
def fresh_scopes():
    """Fresh name counters and an empty attribute scope."""
    with mx.name.NameManager():
        with mx.AttrScope():
            yield


def resolve_op(op):
    f = getattr(mx.sym, op, None)
    return f if f is not None else getattr(mx.sym._internal, op)


def node_attrs(sym):
    """String attrs of the head node as MXNet's JSON stores them."""
    return json.loads(sym.tojson())['nodes'][-1].get('attrs', {})
