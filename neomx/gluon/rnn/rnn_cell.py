"""Recurrent cells (MXNet 1.9.1's ``gluon.rnn.rnn_cell``): one step at a time (``cell(x,
states)``) or a whole sequence (``cell.unroll(length, inputs, ...)``), imperatively or
hybridized, with MXNet's parameter and node names (``t0_i2h``, ``t1_plus0``, ...).

A cell counts its steps (``_counter``, used in node names) and its begin states
(``_init_counter``); ``reset()`` zeroes both, and ``unroll`` starts with it.
"""
from __future__ import annotations

import numpy as np

from ... import ndarray, symbol
from ...base import _as_list
from ..block import Block, HybridBlock
from ..nn import LeakyReLU
from ..parameter import tensor_types
from ..utils import _indent
from ...rnn._state import call_state_func

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


# --- sequence helpers ---------------------------------------------------------------------------
def _cells_state_info(cells, batch_size):
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        ctx = inputs.context if isinstance(inputs, tensor_types) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` (one tensor or a list of steps) as a list of steps (``merge`` False), one
    tensor (True) or as they are (None): (inputs, time axis, F, batch size)."""
    assert inputs is not None, \
        "unroll(inputs=None) has been deprecated. Please create input variables outside unroll."
    axis = layout.find("T")
    batch_axis = layout.find("N")
    batch_size = 0
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            assert len(inputs.list_outputs()) == 1, \
                "unroll doesn't allow grouped symbol as input. Please convert to list with " \
                "list(inputs) first or let unroll handle splitting."
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    elif isinstance(inputs, ndarray.NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            assert length is None or length == inputs.shape[in_axis]
            inputs = _as_list(ndarray.split(inputs, axis=in_axis,
                                            num_outputs=inputs.shape[in_axis], squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        if isinstance(inputs[0], symbol.Symbol):
            F = symbol
        else:
            F = ndarray
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, tensor_types) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    assert valid_length is not None
    if not isinstance(data, tensor_types):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                   squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    F = symbol if isinstance(sequences[0], symbol.Symbol) else ndarray
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    if unroll_step > 1 or F is symbol:
        return F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True)
    return [rev[0]]


# --- base cells ---------------------------------------------------------------------------------
class RecurrentCell(Block):
    """Abstract base class for RNN cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix for names of Blocks (and name of weight if params is None).
    params : Parameter or None, optional
        Container for weight sharing between cells (created if None).
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset before re-using the cell for another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout information of states."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial states, ``func(name='<prefix>begin_state_<n>', shape=..., __layout__=...,
        **kwargs)`` for each entry of :meth:`state_info`.

        Parameters
        ----------
        batch_size : int
            Only needed for NDArrays.
        func : callable, default ``mx.nd.zeros``
            ``mx.sym.zeros``, ``mx.sym.var``, ``mx.nd.ones``, ...
        **kwargs
            More keywords for ``func`` (``ctx``, ``dtype``, ...).
        """
        assert not self._modified, \
            "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(call_state_func(
                func, "%sbegin_state_%d" % (self._prefix, self._init_counter), **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll the cell ``length`` steps.

        Parameters
        ----------
        length : int
        inputs : Symbol, NDArray or list of them
            One tensor in ``layout`` or ``length`` tensors ``(N, C)``.
        begin_state : list, optional
            Default: :meth:`begin_state` (zeros).
        layout : str, default 'NTC'
        merge_outputs : bool or None
            True: one tensor; False: a list of steps; None: whatever is natural.
        valid_length : Symbol or NDArray, optional
            ``(N,)`` lengths: outputs past them are zero and the states are those at the last
            valid step.

        Returns
        -------
        outputs, states
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for ele in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """``activation`` (a name, a LeakyReLU block or a callable) applied to ``inputs``."""
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation)
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: (output, new states)."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """HybridRecurrentCell supports hybridize."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _mapping_repr(cell, show_activation):
    s = "{name}({mapping}" + (", {_activation}" if show_activation else "") + ")"
    shape = cell.i2h_weight.shape
    mapping = "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0])
    return s.format(name=cell.__class__.__name__, mapping=mapping, **cell.__dict__)


class _GatedCell(HybridRecurrentCell):
    """i2h/h2h weights and biases for ``gates`` gates of ``hidden_size``."""

    _num_gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        g = self._num_gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def __repr__(self):
        return _mapping_repr(self, False)

    def _i2h_h2h(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        n = self._hidden_size * self._num_gates
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        return i2h, h2h


class RNNCell(_GatedCell):
    r"""Elman RNN cell: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
    activation : str or Block, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size : int, default 0
    prefix : str, default ``'rnn_'``
    params : ParameterDict, optional

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.gluon.rnn.RNNCell(4, input_size=3)
    >>> cell.initialize()
    >>> out, states = cell(mx.nd.ones((2, 3)), cell.begin_state(batch_size=2))
    >>> out.shape
    (2, 4)
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        self._activation = activation
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return _mapping_repr(self, hasattr(self, "_activation"))

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                 h2h_bias, prefix)
        i2h_plus_h2h = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        output = self._get_activation(F, i2h_plus_h2h, self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long short-term memory cell (gates i, f, c, o; states ``[h, c]``).

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size : int, default 0
    prefix : str, default ``'lstm_'``
    params : ParameterDict, optional
    activation : str, default 'tanh'
    recurrent_activation : str, default 'sigmoid'

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.gluon.rnn.LSTMCell(4)
    >>> cell.initialize()
    >>> outs, states = cell.unroll(5, mx.nd.ones((2, 5, 3)), merge_outputs=True)
    >>> outs.shape, states[1].shape
    ((2, 5, 4), (2, 4))
    """

    _num_gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                 h2h_bias, prefix)
        gates = F.elemwise_add(i2h, h2h, name=prefix + "plus0")
        sl = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, sl[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, sl[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, sl[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, sl[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=act,
                                                       name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""Gated recurrent unit cell, cuDNN's variant (the reset gate multiplies
    ``W_hn h + b_hn``).

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : str or Initializer
    input_size : int, default 0
    prefix : str, default ``'gru_'``
    params : ParameterDict, optional

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.gluon.rnn.GRUCell(4)
    >>> cell.initialize()
    >>> out, states = cell(mx.nd.ones((2, 3)), [mx.nd.zeros((2, 4))])
    >>> out.shape
    (2, 4)
    """

    _num_gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        prev_h = states[0]
        i2h, h2h = self._i2h_h2h(F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias,
                                 h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
                                  act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
                                   act_type="sigmoid", name=prefix + "z_act")
        next_h_tmp = F.Activation(F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h,
                                                                     name=prefix + "mul0"),
                                                 name=prefix + "plus2"),
                                  act_type="tanh", name=prefix + "h_act")
        ones = F.ones_like(update_gate, name=prefix + "ones_like0")
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate, name=prefix + "minus0"),
                           next_h_tmp, name=prefix + "mul1"),
            F.elemwise_mul(update_gate, prev_h, name=prefix + "mul20"),
            name=prefix + "out")
        return next_h, [next_h]


# --- containers ---------------------------------------------------------------------------------
class _StackMixin:
    """What SequentialRNNCell and HybridSequentialRNNCell share: cells stepped in order."""

    def __repr__(self):
        modstr = "\n".join("({i}): {m}".format(i=i, m=_indent(m.__repr__(), 2))
                           for i, m in self._children.items())
        return "{name}(\n{modstr}\n)".format(name=self.__class__.__name__, modstr=modstr)

    def add(self, cell):
        """Append a cell to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        assert all(not isinstance(cell, BidirectionalCell) for cell in self._children.values())
        for cell in self._children.values():
            n = len(cell.state_info())
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=None if i < num_cells - 1
                                         else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """Sequentially stacking multiple RNN cells.

    Examples
    --------
    >>> import neomx as mx
    >>> stack = mx.gluon.rnn.SequentialRNNCell()
    >>> stack.add(mx.gluon.rnn.LSTMCell(4))
    >>> stack.add(mx.gluon.rnn.GRUCell(3))
    >>> stack.initialize()
    >>> outs, states = stack.unroll(2, mx.nd.ones((1, 2, 5)), merge_outputs=True)
    >>> outs.shape, len(states)
    ((1, 2, 3), 3)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """Sequentially stacking multiple HybridRNN cells."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Applies dropout on input.

    Parameters
    ----------
    rate : float
        Fraction of the input that gets dropped out during training time.
    axes : tuple of int, default ()
        The axes on which dropout mask is shared.
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        assert isinstance(rate, (float, int, np.generic)), "rate must be a number"
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return "{name}(rate={_rate}, axes={_axes})".format(name=self.__class__.__name__,
                                                           **self.__dict__)

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name="t%d_fwd" % self._counter)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, tensor_types):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base class for modifier cells: a cell wrapping ``base_cell`` (sharing its
    parameters); the base cell cannot be called directly any more."""

    def __init__(self, base_cell):
        assert not base_cell._modified, \
            "Cell %s is already modified. One cell cannot be modified twice" % base_cell.name
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=symbol.zeros, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=func, **kwargs)
        self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return "{name}({base_cell})".format(name=self.__class__.__name__, **self.__dict__)


class ZoneoutCell(ModifierCell):
    """Applies Zoneout on the base cell: each output and state element keeps its previous
    value with probability ``zoneout_outputs`` / ``zoneout_states`` in training."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        assert not isinstance(base_cell, BidirectionalCell), \
            "BidirectionalCell doesn't support zoneout since it doesn't support step. " \
            "Please add ZoneoutCell to the cells underneath instead."
        assert not isinstance(base_cell, SequentialRNNCell) or \
            not getattr(base_cell, "_bidirectional", False), \
            "Bidirectional SequentialRNNCell doesn't support zoneout. " \
            "Please add ZoneoutCell to the cells underneath instead."
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return "{name}(p_out={zoneout_outputs}, p_state={zoneout_states}, {base_cell})".format(
            name=self.__class__.__name__, **self.__dict__)

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([F.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (He et al., Google NMT)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name="t%d_fwd" % self._counter)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs,
                                                valid_length=valid_length)
        self.base_cell._modified = True
        merge_outputs = (isinstance(outputs, tensor_types) if merge_outputs is None
                         else merge_outputs)
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Bidirectional RNN cell: ``l_cell`` forwards, ``r_cell`` over the reversed sequence,
    outputs concatenated (only ``unroll``, no stepping).

    Parameters
    ----------
    l_cell, r_cell : RecurrentCell
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return "{name}(forward={l_cell}, backward={r_cell})".format(
            name=self.__class__.__name__, l_cell=self._children["l_cell"],
            r_cell=self._children["r_cell"])

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, tensor_types)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout,
                                                           merge_outputs)
        if merge_outputs:
            reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2,
                               name="%sout" % self._output_prefix)
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name="%st%d" % (self._output_prefix, i))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states
