"""Checkpoints of networks built from recurrent cells (MXNet 1.9.1's ``mx.rnn.rnn``): weights
are saved unpacked (one array per gate) and packed again on load, so files are independent of
fused vs unfused cells."""
from __future__ import annotations

import warnings

from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated: call ``cell.unroll`` directly."""
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.")
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state,
                       input_prefix=input_prefix, layout=layout)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """Save ``prefix-symbol.json`` and ``prefix-%04d.params`` with the cells' weights unpacked.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    epoch : int
    symbol : Symbol
    arg_params, aux_params : dict of str to NDArray
    """
    if isinstance(cells, BaseRNNCell):
        cells = [cells]
    for cell in cells:
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """Load a checkpoint saved by :func:`save_rnn_checkpoint`, packing the cells' weights:
    (symbol, arg_params, aux_params)."""
    sym, arg, aux = load_checkpoint(prefix, epoch)
    if isinstance(cells, BaseRNNCell):
        cells = [cells]
    for cell in cells:
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback for ``Module.fit`` saving an RNN checkpoint every ``period``
    epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
