"""Gluon helpers: splitting batches over devices, gradient clipping, file checks, hooks."""
from __future__ import annotations

import collections
import hashlib
import os
import warnings
import weakref

import numpy as np

from .. import ndarray
from ..base import MXNetError

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` slices along ``batch_axis`` (the first ones one
    element larger when it does not divide evenly and ``even_split`` is False)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices along "
            f"axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            "even_split=False to allow uneven partitioning of data.")
    each, extras = divmod(size, num_slice)
    sizes = [0] + extras * [each + 1] + (num_slice - extras) * [each]
    points = np.array(sizes).cumsum()
    if batch_axis != 0:
        return [ndarray.slice_axis(data, axis=batch_axis, begin=int(points[i]),
                                   end=int(points[i + 1])) for i in range(num_slice)]
    return [data[int(points[i]):int(points[i + 1])] if i < num_slice - 1
            else data[int(points[i]):size] for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` (NDArray or array-like) along ``batch_axis`` and put slice ``i`` on
    ``ctx_list[i]``."""
    if not isinstance(data, ndarray.NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``; returns
    the norm before scaling (a float, or an NDArray when ``check_isfinite`` is False)."""
    if not arrays:
        raise MXNetError("clip_global_norm: arrays must not be empty")
    ctx = arrays[0].context

    def _sq(a):
        x = a.reshape((-1,))
        return ndarray.dot(x, x).as_in_context(ctx)

    total = ndarray.sqrt(ndarray.add_n(*[_sq(a) for a in arrays]))
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                      stacklevel=2)
    scale = max_norm / (total + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1, ctx=ctx), dim=0))
    for a in arrays:
        a *= scale.as_in_context(a.context)
    return total.asscalar() if check_isfinite else total


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file's content is ``sha1_hash``."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move ``src`` over ``dst`` atomically."""
    os.replace(src, dst)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """The local file for ``url``. neomx never downloads: when the file is there (and matches
    ``sha1_hash``) its path is returned, otherwise an error names the URL and where to put it."""
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise MXNetError("Can't construct file-name from this URL. Please set the `path` "
                             "option manually.")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise MXNetError(f"Number of retries should be at least 0, currently it's {retries}")
    present = os.path.exists(fname) and not (sha1_hash and not check_sha1(fname, sha1_hash))
    if present and not overwrite:
        return fname
    why = "does not match its SHA-1" if os.path.exists(fname) else "is not there"
    raise MXNetError(f"neomx does not download files: {fname} {why}. Fetch {url} yourself and "
                     f"put it at {os.path.abspath(fname)}")


# --- internal helpers (MXNet's names) --------------------------------------------------------
def _indent(s_, num_spaces):
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    return "\n".join([first] + [num_spaces * " " + line for line in lines])


def _brief_print_list(lst, limit=7):
    lst = list(lst)
    if len(lst) > limit:
        return (_brief_print_list(lst[:limit // 2], limit) + ", ..., "
                + _brief_print_list(lst[-limit // 2:], limit))
    return ", ".join(f"'{i}'" for i in lst)


class HookHandle:
    """Handle of a forward (pre-)hook: ``detach()`` removes it (also as a context manager)."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks_dict_ref:
            raise MXNetError("The same handle cannot be attached twice.")
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks_dict = self._hooks_dict_ref()
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref(), self._id)

    def __setstate__(self, state):
        if state[0] is None:
            self._hooks_dict_ref = weakref.ref(collections.OrderedDict())
        else:
            self._hooks_dict_ref = weakref.ref(state[0])
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (0 means unknown, as in MXNet 1.x)."""
    if shape is None:
        return False
    if len(shape) == 0:
        return False
    for d in shape:
        if d == 0:
            return False
        if d < 0:
            raise MXNetError(f"shape dimension size cannot be less than 0, while received {d}")
    return True
