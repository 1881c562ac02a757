"""The fused recurrent layers ``RNN``, ``LSTM`` and ``GRU`` (MXNet 1.9.1's
``gluon.rnn.rnn_layer``).

Each layer owns one parameter per layer, direction and group, named as MXNet's
(``l0_i2h_weight``, ``r1_h2h_bias``, ``l0_h2r_weight`` with a projection), and runs the fused
``RNN`` operator over their concatenation in MXNet's order (every weight, then every bias;
layer-major, then direction, then i2h/h2h/h2r) by ``_rnn_param_concat``.
"""
from __future__ import annotations

import re

from ... import ndarray, symbol
from ..block import HybridBlock
from ..parameter import tensor_types
from ...rnn._state import call_state_func
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_PARAM_KEY = re.compile(r"(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z")


class _RNNLayer(HybridBlock):
    """The shared implementation of the fused recurrent layers."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        assert layout in ("TNC", "NTC"), \
            "Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = _GATES[mode]
        self._register_all(input_size)

    def _register_all(self, ni):
        ng, nh, npj = self._gates, self._hidden_size, self._projection_size
        rec = npj or nh
        for i in range(self._num_layers):
            for j in "lr"[:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni),
                                     self._i2h_weight_initializer)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, rec),
                                     self._h2h_weight_initializer)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), self._i2h_bias_initializer)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), self._h2h_bias_initializer)
                if npj:
                    self._register_param(f"{j}{i}_h2r_weight", (npj, nh),
                                         self._h2r_weight_initializer)
            ni = rec * self._dir

    def _register_param(self, name, shape, init):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=self._dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = "{name}({mapping}, {_layout}"
        if self._num_layers != 1:
            s += ", num_layers={_num_layers}"
        if self._dropout != 0:
            s += ", dropout={_dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        mapping = "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0] // self._gates)
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    def _collect_params_with_prefix(self, prefix=""):
        """Structural names of MXNet's older unfused layout (``_unfused.0.l_cell.i2h_weight``),
        which ``save_parameters`` writes and ``load_parameters`` reads."""
        if prefix:
            prefix += "."
        matches = {k: _PARAM_KEY.match(k) for k in self._reg_params}
        bidirectional = any(m.group(1) == "r" for m in matches.values())

        def convert(m):
            d, layer, g, t = m.groups()
            if bidirectional:
                return f"_unfused.{layer}.{d}_cell.{g}_{t}"
            return f"_unfused.{layer}.{g}_{t}"

        ret = {prefix + convert(matches[k]): v for k, v in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """The same network as a stack of cells sharing this layer's parameters."""
        assert not self._projection_size, "_unfuse does not support projection layer yet!"
        assert not self._lstm_state_clip_min and not self._lstm_state_clip_max, \
            "_unfuse does not support state clipping yet!"
        nh = self._hidden_size

        def get_cell(**kwargs):
            if self._mode == "lstm":
                return rnn_cell.LSTMCell(nh, **kwargs)
            if self._mode == "gru":
                return rnn_cell.GRUCell(nh, **kwargs)
            return rnn_cell.RNNCell(nh, activation=self._mode[4:], **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": ni,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(get_cell(prefix="l%d_" % i, **kwargs),
                                                         get_cell(prefix="r%d_" % i, **kwargs)))
                else:
                    stack.add(get_cell(prefix="l%d_" % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = nh * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states ``func(name='<prefix>h0_<i>', shape=..., __layout__='LNC',
        dtype=..., **kwargs)``, one per entry of :meth:`state_info`.

        Parameters
        ----------
        batch_size : int
            Only needed for NDArrays (``N`` in the layout).
        func : callable, default ``mx.nd.zeros``
            ``mx.sym.zeros``, ``mx.sym.var``, ``mx.nd.ones``, ...
        **kwargs
            More keywords for ``func`` (``ctx``, ``dtype``, ...).
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(call_state_func(func, "%sh0_%d" % (self.prefix, i), **info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, tensor_types):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def infer_shape(self, *args):
        """Parameter shapes from the input's feature size (deferred ``input_size``)."""
        x = args[0]
        shape = x.shape if not isinstance(x, (list, tuple)) else x[0].shape
        ni = shape[self._layout.find("C")]
        saved = {k: p for k, p in self._reg_params.items()}
        ng, nh, npj = self._gates, self._hidden_size, self._projection_size
        rec = npj or nh
        for i in range(self._num_layers):
            for j in "lr"[:self._dir]:
                p = saved[f"{j}{i}_i2h_weight"]
                if not all(p.shape):
                    p.shape = (ng * nh, ni)
            ni = rec * self._dir

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ValueError("Invalid recurrent state shape. Expecting %s, got %s." % (
                        str(info["shape"]), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _flat_params(self, F, kwargs):
        groups = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        params = [kwargs[f"{d}{layer}_{g}_{t}"].reshape(-1)
                  for t in ("weight", "bias")
                  for layer in range(self._num_layers)
                  for d in "lr"[:self._dir]
                  for g in groups if g != "h2r" or t != "bias"]
        return F._internal._rnn_param_concat(*params, dim=0)

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        """The fused ``RNN`` operator on the concatenated parameters: (outputs, states)."""
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        params = self._flat_params(F, kwargs)
        rnn_args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == "lstm":
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states


def _states(n, shape, dtype):
    return [{"shape": shape, "__layout__": "LNC", "dtype": dtype} for _ in range(n)]


class RNN(_RNNLayer):
    r"""A multi-layer Elman RNN with ``tanh`` or ``relu`` non-linearity over a sequence:
    :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
        The number of features in the hidden state h.
    num_layers : int, default 1
    activation : {'relu', 'tanh'}, default 'relu'
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of each layer except the last.
    bidirectional : bool, default False
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size : int, default 0
        Inferred from the first input when 0.
    dtype : str, default 'float32'
    prefix, params :
        As for every Block.

    Inputs: ``data`` ``(T, N, C)`` (layout ``TNC``) and optionally ``states``
    ``(num_layers * directions, N, hidden_size)``. Outputs: ``out`` ``(T, N, directions *
    hidden_size)``, and ``out_states`` when ``states`` were given.

    Examples
    --------
    >>> import neomx as mx
    >>> layer = mx.gluon.rnn.RNN(100, 3)
    >>> layer.initialize()
    >>> x = mx.nd.random.uniform(shape=(5, 3, 10))
    >>> layer(x).shape
    (5, 3, 100)
    >>> h0 = mx.nd.random.uniform(shape=(3, 3, 100))
    >>> output, hn = layer(x, h0)
    >>> hn[0].shape
    (3, 3, 100)
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return _states(1, (self._num_layers * self._dir, batch_size, self._hidden_size),
                       self._dtype)


class LSTM(_RNNLayer):
    r"""A multi-layer long short-term memory RNN over a sequence (gates i, f, g, o; optional
    projection of the hidden state, ``projection_size``, and cell-state clipping).

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
    bidirectional : bool, default False
    input_size : int, default 0
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    projection_size : int, default None
    h2r_weight_initializer : str or Initializer
    state_clip_min, state_clip_max : float or None
    state_clip_nan : bool, default False
    dtype : str, default 'float32'
    use_sequence_length : bool, default False
        Take a ``sequence_length`` input (``(N,)``) after the states.

    Inputs: ``data`` and optionally ``states`` ``[h0, c0]``. Outputs: ``out``, and
    ``[hT, cT]`` when states were given.

    Examples
    --------
    >>> import neomx as mx
    >>> layer = mx.gluon.rnn.LSTM(100, 3)
    >>> layer.initialize()
    >>> x = mx.nd.random.uniform(shape=(5, 3, 10))
    >>> h0 = mx.nd.random.uniform(shape=(3, 3, 100))
    >>> c0 = mx.nd.random.uniform(shape=(3, 3, 100))
    >>> output, hn = layer(x, [h0, c0])
    >>> output.shape, len(hn)
    ((5, 3, 100), 2)
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        n = self._num_layers * self._dir
        h = (n, batch_size, self._projection_size or self._hidden_size)
        return (_states(1, h, self._dtype)
                + _states(1, (n, batch_size, self._hidden_size), self._dtype))


class GRU(_RNNLayer):
    r"""A multi-layer gated recurrent unit RNN over a sequence, cuDNN's variant (the reset gate
    multiplies ``W_hn h + b_hn``).

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
    bidirectional : bool, default False
    input_size : int, default 0
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    dtype : str, default 'float32'

    Examples
    --------
    >>> import neomx as mx
    >>> layer = mx.gluon.rnn.GRU(100, 3)
    >>> layer.initialize()
    >>> layer(mx.nd.random.uniform(shape=(5, 3, 10))).shape
    (5, 3, 100)
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size=0):
        return _states(1, (self._num_layers * self._dir, batch_size, self._hidden_size),
                       self._dtype)
