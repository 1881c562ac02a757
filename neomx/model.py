"""``mx.model``: checkpoints as MXNet writes them (``prefix-symbol.json`` + ``prefix-%04d.params``).

A checkpoint's ``.params`` file is an NDArray dict whose keys are ``arg:<name>`` for arguments
and ``aux:<name>`` for auxiliary states, all saved from CPU copies.
"""
from __future__ import annotations

import logging

from . import ndarray as nd
from . import symbol as sym
from .context import cpu

__all__ = ["save_checkpoint", "load_params", "load_checkpoint"]


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Checkpoint the model data into files.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        The epoch number of the model.
    symbol : Symbol or None
        The network; written to ``prefix-symbol.json`` unless None.
    arg_params : dict of str to NDArray
        The network's weights.
    aux_params : dict of str to NDArray
        The network's auxiliary states.
    remove_amp_cast : bool, optional
        Whether to remove the amp_cast and amp_multicast operators before saving the symbol.

    Notes
    -----
    - ``prefix-symbol.json`` is written for the symbol.
    - ``prefix-%04d.params`` (e.g. ``prefix-0003.params``) is written for the parameters.

    Examples
    --------
    >>> import os, tempfile
    >>> import neomx as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
    >>> net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    >>> mx.model.save_checkpoint(prefix, 3, net, {'fc_weight': mx.nd.ones((2, 4)),
    ...                                           'fc_bias': mx.nd.zeros((2,))}, {})
    >>> sorted(os.listdir(os.path.dirname(prefix)))
    ['net-0003.params', 'net-symbol.json']
    >>> _, arg, aux = mx.model.load_checkpoint(prefix, 3)
    >>> sorted(arg), aux
    (['fc_bias', 'fc_weight'], {})
    """
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    save_dict = {('arg:%s' % k): v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({('aux:%s' % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = '%s-%04d.params' % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """Load ``prefix-%04d.params`` into ``(arg_params, aux_params)``.

    Each key is split at its first ``:``; keys with another prefix than ``arg``/``aux`` are
    skipped, as in MXNet. An empty file logs a warning and gives two empty dicts.
    """
    fname = '%s-%04d.params' % (prefix, epoch)
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return (arg_params, aux_params)
    if not isinstance(save_dict, dict):
        raise ValueError(f"Params file '{fname}' holds {len(save_dict)} unnamed arrays; "
                         "a checkpoint needs 'arg:<name>' / 'aux:<name>' keys")
    for k, v in save_dict.items():
        tp, sep, name = k.partition(':')
        if not sep:
            raise ValueError(f"Params file '{fname}': key '{k}' has no 'arg:' or 'aux:' prefix")
        if tp == 'arg':
            arg_params[name] = v
        if tp == 'aux':
            aux_params[name] = v
    return (arg_params, aux_params)


def load_checkpoint(prefix, epoch):
    """Load a model checkpoint written by ``save_checkpoint``.

    Parameters
    ----------
    prefix : str
        Prefix of model name.
    epoch : int
        Epoch number of the model to load.

    Returns
    -------
    symbol : Symbol
        The network, from ``prefix-symbol.json``.
    arg_params : dict of str to NDArray
        The network's weights, from ``prefix-%04d.params``.
    aux_params : dict of str to NDArray
        The network's auxiliary states.
    """
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return (symbol, arg_params, aux_params)


# --- Training callbacks' argument (added with the Module issue) -----------------------------
from collections import namedtuple  # noqa: E402

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])
BatchEndParam.__doc__ = """What ``Module.fit``/``score`` pass to each batch-end callback: the epoch,
the batch number within it, the metric being accumulated and the caller's ``locals()``."""
__all__.append("BatchEndParam")
