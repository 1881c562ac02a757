"""Convolutional recurrent cells (MXNet 1.9.1's ``gluon.contrib.rnn.conv_rnn_cell``): the
``i2h`` and ``h2h`` transforms of RNN, LSTM and GRU cells are convolutions over a state that
keeps its spatial layout (``conv_layout``, channels first or last).

The ``h2h`` convolution pads so the state keeps its size (odd kernels only); the state's
spatial size is the ``i2h`` convolution's output size for ``input_shape``.
"""
from __future__ import annotations

import numbers
from math import floor

from ...rnn import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]


def _get_conv_out_size(dimensions, kernels, paddings, dilations):
    return tuple(int(floor(x + 2 * p - d * (k - 1) - 1) + 1) if x else 0
                 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


def _tuple(spec, dims):
    return (spec,) * dims if isinstance(spec, numbers.Number) else spec


class _BaseConvRNNCell(HybridRecurrentCell):
    """Abstract base class for convolutional RNNs."""

    _gate_names: tuple = ()

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        assert all(isinstance(spec, int) or len(spec) == dims
                   for spec in [i2h_kernel, i2h_pad, i2h_dilate, h2h_kernel, h2h_dilate]), \
            "For {dims}D convolution, the convolution settings can only be either int " \
            "or list/tuple of length {dims}".format(dims=dims)
        self._i2h_kernel = _tuple(i2h_kernel, dims)
        self._stride = (1,) * dims
        self._i2h_pad = _tuple(i2h_pad, dims)
        self._i2h_dilate = _tuple(i2h_dilate, dims)
        self._h2h_kernel = _tuple(h2h_kernel, dims)
        assert all(k % 2 == 1 for k in self._h2h_kernel), \
            "Only support odd number, get h2h_kernel= %s" % str(h2h_kernel)
        self._h2h_dilate = _tuple(h2h_dilate, dims)
        (self._channel_axis, self._in_channels, i2h_param_shape, h2h_param_shape,
         self._h2h_pad, self._state_shape) = self._decide_shapes()
        total = hidden_channels * self._num_gates
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_param_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_param_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _decide_shapes(self):
        """(channel axis, input channels, i2h and h2h weight shapes, h2h pad, state shape)."""
        channel_axis = self._conv_layout.find("C")
        input_shape = self._input_shape
        in_channels = input_shape[channel_axis - 1]
        hidden = self._hidden_channels
        dimensions = input_shape[1:] if channel_axis == 1 else input_shape[:-1]
        total_out = hidden * self._num_gates
        conv_out_size = _get_conv_out_size(dimensions, self._i2h_kernel, self._i2h_pad,
                                           self._i2h_dilate)
        h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        if channel_axis == 1:
            i2h_shape = (total_out, in_channels) + tuple(self._i2h_kernel)
            h2h_shape = (total_out, hidden) + tuple(self._h2h_kernel)
            state_shape = (hidden,) + conv_out_size
        else:
            i2h_shape = (total_out,) + tuple(self._i2h_kernel) + (in_channels,)
            h2h_shape = (total_out,) + tuple(self._h2h_kernel) + (hidden,)
            state_shape = conv_out_size + (hidden,)
        return channel_axis, in_channels, i2h_shape, h2h_shape, h2h_pad, state_shape

    def __repr__(self):
        s = "{name}({mapping}"
        if hasattr(self, "_activation"):
            s += ", {_activation}"
        s += ", {_conv_layout})"
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        mapping = "{0} -> {1}".format(in_channels if in_channels else None, shape[0])
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        n = self._hidden_channels * self._num_gates
        i2h = F.Convolution(data=inputs, num_filter=n, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], num_filter=n, kernel=self._h2h_kernel,
                            dilate=self._h2h_dilate, pad=self._h2h_pad, stride=self._stride,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            name=prefix + "h2h")
        return i2h, h2h

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError("_BaseConvRNNCell is abstract class for convolutional RNN")


class _ConvRNNCell(_BaseConvRNNCell):
    _gate_names = ("",)
    _num_states = 1

    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gate_names = ("_i", "_f", "_c", "_o")
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        gates = i2h + h2h
        sl = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice",
                            axis=self._channel_axis)
        in_gate = F.Activation(sl[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(sl[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, sl[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(sl[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gate_names = ("_r", "_z", "_o")
    _num_states = 1

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice",
                                           axis=self._channel_axis)
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice",
                                           axis=self._channel_axis)
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation,
                                          name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                name=prefix + "out")
        return next_h, [next_h]


_PARAMS_DOC = """
    Parameters
    ----------
    input_shape : tuple of int
        Input shape of one step of one sample, in ``conv_layout`` without the batch axis
        (e.g. ``(C, {spatial})`` for ``'{layout}'``).
    hidden_channels : int
        Number of output channels.
    i2h_kernel : int or tuple of int
        Input convolution kernel sizes.
    h2h_kernel : int or tuple of int
        Recurrent convolution kernel sizes; odd sizes only.
    i2h_pad : int or tuple of int, default {zeros}
    i2h_dilate, h2h_dilate : int or tuple of int, default {ones}
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    conv_layout : str, default '{layout}'
        Layout of inputs, states and weights: '{layout}' or '{last}'.
    activation : str or gluon.Block, default 'tanh'
    prefix : str, default ``'{alias}_'``
    params : ParameterDict or None
        Container for weight sharing between cells.
"""


def _doc(title, dims, alias):
    spatial = ("W", "H, W", "D, H, W")[dims - 1]
    layout = "NC" + spatial.replace(", ", "")
    last = "N" + spatial.replace(", ", "") + "C"
    return title + "\n" + _PARAMS_DOC.format(spatial=spatial, layout=layout, last=last,
                                             zeros=(0,) * dims, ones=(1,) * dims, alias=alias)


class Conv1DRNNCell(_ConvRNNCell):
    __doc__ = _doc(r"1D convolutional RNN cell: :math:`h_t = tanh(W_i * x_t + R_i * h_{t-1} + "
                   r"b_i)`.", 1, "conv_rnn")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0,),
                 i2h_dilate=(1,), h2h_dilate=(1,), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout="NCW", activation="tanh",
                 prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 1, conv_layout, activation,
                         prefix, params)


class Conv2DRNNCell(_ConvRNNCell):
    __doc__ = _doc(r"2D convolutional RNN cell: :math:`h_t = tanh(W_i * x_t + R_i * h_{t-1} + "
                   r"b_i)`.", 2, "conv_rnn")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0, 0),
                 i2h_dilate=(1, 1), h2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout="NCHW", activation="tanh",
                 prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 2, conv_layout, activation,
                         prefix, params)


class Conv3DRNNCell(_ConvRNNCell):
    __doc__ = _doc(r"3D convolutional RNN cell: :math:`h_t = tanh(W_i * x_t + R_i * h_{t-1} + "
                   r"b_i)`.", 3, "conv_rnn")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0, 0, 0), i2h_dilate=(1, 1, 1), h2h_dilate=(1, 1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout="NCDHW", activation="tanh", prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 3, conv_layout, activation,
                         prefix, params)


class Conv1DLSTMCell(_ConvLSTMCell):
    __doc__ = _doc("1D convolutional LSTM cell (Shi et al., NIPS 2015); states ``[h, c]``.",
                   1, "conv_lstm")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0,),
                 i2h_dilate=(1,), h2h_dilate=(1,), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout="NCW", activation="tanh",
                 prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 1, conv_layout, activation,
                         prefix, params)


class Conv2DLSTMCell(_ConvLSTMCell):
    __doc__ = _doc("2D convolutional LSTM cell (Shi et al., NIPS 2015); states ``[h, c]``.",
                   2, "conv_lstm") + """
    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.gluon.contrib.rnn.Conv2DLSTMCell((3, 8, 8), 4, 3, 3, i2h_pad=1)
    >>> cell.initialize()
    >>> out, states = cell.unroll(2, mx.nd.ones((1, 2, 3, 8, 8)), merge_outputs=True)
    >>> out.shape, states[1].shape
    ((1, 2, 4, 8, 8), (1, 4, 8, 8))
    """

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0, 0),
                 i2h_dilate=(1, 1), h2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout="NCHW", activation="tanh",
                 prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 2, conv_layout, activation,
                         prefix, params)


class Conv3DLSTMCell(_ConvLSTMCell):
    __doc__ = _doc("3D convolutional LSTM cell (Shi et al., NIPS 2015); states ``[h, c]``.",
                   3, "conv_lstm")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0, 0, 0), i2h_dilate=(1, 1, 1), h2h_dilate=(1, 1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout="NCDHW", activation="tanh", prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 3, conv_layout, activation,
                         prefix, params)


class Conv1DGRUCell(_ConvGRUCell):
    __doc__ = _doc("1D convolutional GRU cell (gates r, z and the candidate n).", 1, "conv_gru")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0,),
                 i2h_dilate=(1,), h2h_dilate=(1,), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout="NCW", activation="tanh",
                 prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 1, conv_layout, activation,
                         prefix, params)


class Conv2DGRUCell(_ConvGRUCell):
    __doc__ = _doc("2D convolutional GRU cell (gates r, z and the candidate n).", 2, "conv_gru")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=(0, 0),
                 i2h_dilate=(1, 1), h2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout="NCHW", activation="tanh",
                 prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 2, conv_layout, activation,
                         prefix, params)


class Conv3DGRUCell(_ConvGRUCell):
    __doc__ = _doc("3D convolutional GRU cell (gates r, z and the candidate n).", 3, "conv_gru")

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0, 0, 0), i2h_dilate=(1, 1, 1), h2h_dilate=(1, 1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout="NCDHW", activation="tanh", prefix=None, params=None):
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                         i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, 3, conv_layout, activation,
                         prefix, params)
