"""Symbolic recurrent cells (MXNet 1.9.1's ``mx.rnn.rnn_cell``): graphs for ``Module`` and
``BucketingModule``, with MXNet's variable and node names (``lstm_i2h_weight``,
``lstm_t0_i2h``, ``lstm_t0_out``, ...).

A cell counts its steps (``_counter``, used in node names) and begin states
(``_init_counter``); ``reset()`` zeroes both and ``unroll`` starts with it.
``unpack_weights``/``pack_weights`` convert between a cell's fused arrays and one array per
gate (``lstm_i2h_i_weight``, ...), the form ``save_rnn_checkpoint`` writes.
"""
from __future__ import annotations

import functools
import json
import warnings

import numpy as np

from .. import initializer as init
from .. import ndarray, symbol
from ._state import call_state_func

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_numeric = (float, int, np.generic)


def _cells_state_info(cells):
    return sum([c.state_info for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` as a list of steps (``merge`` False), one Symbol (True) or as they are."""
    assert inputs is not None, \
        "unroll(inputs=None) has been deprecated. Please create input variables outside unroll."
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            assert len(inputs.list_outputs()) == 1, \
                "unroll doesn't allow grouped symbol as input. Please convert to list with " \
                "list(inputs) first or let unroll handle splitting."
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        assert length is None or len(inputs) == length
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim0=axis, dim1=in_axis)
    return inputs, axis


class RNNParams:
    """Container for holding variables, shared by cells (``params=cell.params``).

    Parameters
    ----------
    prefix : str
        Names of all variables created by this container are prefixed with it.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created with ``kwargs`` on first use."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """Abstract base class for RNN cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix for names of layers (and name of weight if params is None).
    params : RNNParams, optional
        Container for weight sharing between cells (created if None).
    """

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset before re-using the cell for another graph."""
        self._init_counter = -1
        self._counter = -1
        if hasattr(self, "_cells"):
            for cell in self._cells:
                cell.reset()

    def __call__(self, inputs, states):
        """One step: (output, new states)."""
        raise NotImplementedError()

    @property
    def params(self):
        """Parameters of this cell (no longer its own once read: for sharing)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Shape and layout information of states."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        """Shapes of the states."""
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Initial states, ``func(name='<prefix>begin_state_<n>', **info, **kwargs)``.

        Parameters
        ----------
        func : callable, default ``mx.sym.zeros``
            ``mx.sym.Variable`` to feed states as inputs, ``mx.sym.uniform``, ...
        """
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(call_state_func(
                func, "%sbegin_state_%d" % (self._prefix, self._init_counter), **kwargs))
        return states

    def unpack_weights(self, args):
        """``args`` with each fused i2h/h2h weight and bias split into one array per gate."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop("%s%s_weight" % (self._prefix, group))
            bias = args.pop("%s%s_bias" % (self._prefix, group))
            for j, gate in enumerate(self._gate_names):
                args["%s%s%s_weight" % (self._prefix, group, gate)] = \
                    weight[j * h:(j + 1) * h].copy()
                args["%s%s%s_bias" % (self._prefix, group, gate)] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of :meth:`unpack_weights`."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            weight, bias = [], []
            for gate in self._gate_names:
                weight.append(args.pop("%s%s%s_weight" % (self._prefix, group, gate)))
                bias.append(args.pop("%s%s%s_bias" % (self._prefix, group, gate)))
            args["%s%s_weight" % (self._prefix, group)] = ndarray.concatenate(weight)
            args["%s%s_bias" % (self._prefix, group)] = ndarray.concatenate(bias)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Unroll the cell ``length`` steps.

        Parameters
        ----------
        length : int
        inputs : Symbol or list of Symbol
            One symbol in ``layout`` or ``length`` symbols ``(N, C)``.
        begin_state : list of Symbol, optional
            Default: :meth:`begin_state` (zeros).
        layout : str, default 'NTC'
        merge_outputs : bool or None
            True: one symbol; False: a list of steps; None: whatever is natural.

        Returns
        -------
        outputs, states
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """Simple recurrent neural network cell: ``h = act(i2h(x) + h2h(h))``.

    Parameters
    ----------
    num_hidden : int
    activation : str or Symbol, default 'tanh'
    prefix : str, default ``'rnn_'``
    params : RNNParams, optional

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.rnn.RNNCell(4)
    >>> outs, states = cell.unroll(2, mx.sym.var('data'))
    >>> [o.name for o in outs]
    ['rnn_t0_out', 'rnn_t1_out']
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name="%si2h" % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name="%sh2h" % name)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


class LSTMCell(BaseRNNCell):
    """Long short-term memory cell (gates i, f, c, o; states ``[h, c]``); the i2h bias starts
    with ``forget_bias`` on the forget gate (``mx.init.LSTMBias``).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default ``'lstm_'``
    params : RNNParams, optional
    forget_bias : float, default 1.0

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.rnn.LSTMCell(4)
    >>> outs, states = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)
    >>> outs.infer_shape(data=(2, 3, 5))[1]
    [(2, 3, 4)]
    """

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        self._iB = self.params.get("i2h_bias", init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"},
                {"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 4, name="%si2h" % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name="%sh2h" % name)
        gates = i2h + h2h
        sl = symbol.SliceChannel(gates, num_outputs=4, name="%sslice" % name)
        in_gate = symbol.Activation(sl[0], act_type="sigmoid", name="%si" % name)
        forget_gate = symbol.Activation(sl[1], act_type="sigmoid", name="%sf" % name)
        in_transform = symbol.Activation(sl[2], act_type="tanh", name="%sc" % name)
        out_gate = symbol.Activation(sl[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name="%sstate" % name)
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                       name="%sout" % name)
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """Gated recurrent unit cell (cuDNN's variant; gates r, z, o).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default ``'gru_'``
    params : RNNParams, optional
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}]

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 3, name="%s_i2h" % name)
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 3, name="%s_h2h" % name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name="%s_z_act" % name)
        next_h_tmp = symbol.Activation(i2h + reset_gate * h2h, act_type="tanh",
                                       name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * prev_h,
                                        name="%sout" % name)
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """The fused ``RNN`` operator as a cell (one ``<prefix>parameters`` vector).

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}, default 'lstm'
    bidirectional : bool, default False
    dropout : float, default 0.
    get_next_state : bool, default False
        Whether ``unroll`` returns the last states.
    forget_bias : float, default 1.0
    prefix : str, default ``'<mode>_'``
    params : RNNParams, optional

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.rnn.FusedRNNCell(4, num_layers=2, prefix='lstm_')
    >>> outs, _ = cell.unroll(3, mx.sym.var('data'), layout='TNC', merge_outputs=True)
    >>> outs.list_arguments()
    ['data', 'lstm_parameters', 'lstm_begin_state_0', 'lstm_begin_state_1']
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False, dropout=0.,
                 get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if prefix is None:
            prefix = "%s_" % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
                "gru": ["_r", "_z", "_o"]}[self._mode]

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def _slice_weights(self, arr, li, lh):
        """Views of the flat ``arr`` by per-gate name (MXNet's layout: every weight, then every
        bias; layer, direction, i2h then h2h, gate)."""
        args = {}
        gates, directions = self._gate_names, self._directions
        b = len(directions)
        p = 0
        for layer in range(self._num_layers):
            for d in directions:
                for gate in gates:
                    name = "%s%s%d_i2h%s_weight" % (self._prefix, d, layer, gate)
                    shape = (lh, b * lh) if layer > 0 else (lh, li)
                    size = shape[0] * shape[1]
                    args[name] = arr[p:p + size].reshape(shape)
                    p += size
                for gate in gates:
                    name = "%s%s%d_h2h%s_weight" % (self._prefix, d, layer, gate)
                    args[name] = arr[p:p + lh * lh].reshape((lh, lh))
                    p += lh * lh
        for layer in range(self._num_layers):
            for d in directions:
                for group in ("i2h", "h2h"):
                    for gate in gates:
                        name = "%s%s%d_%s%s_bias" % (self._prefix, d, layer, group, gate)
                        args[name] = arr[p:p + lh]
                        p += lh
        assert p == arr.size, "Invalid parameters size for FusedRNNCell"
        return args

    def unpack_weights(self, args):
        args = args.copy()
        arr = args.pop(self._parameter.name)
        b = len(self._directions)
        m = self._num_gates
        h = self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        nargs = self._slice_weights(arr, num_input, self._num_hidden)
        args.update({name: nd.copy() for name, nd in nargs.items()})
        return args

    def pack_weights(self, args):
        args = args.copy()
        b = self._bidirectional + 1
        m = self._num_gates
        c = self._gate_names
        h = self._num_hidden
        w0 = args["%sl0_i2h%s_weight" % (self._prefix, c[0])]
        num_input = w0.shape[1]
        total = ((num_input + h + 2) * h * m * b
                 + (self._num_layers - 1) * m * h * (h + b * h + 2) * b)
        arr = ndarray.zeros((total,), ctx=w0.context, dtype=w0.dtype)
        for name, nd in self._slice_weights(arr, num_input, h).items():
            nd[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for faster "
                          "speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        else:
            assert axis == 0, "Unsupported layout %s" % layout
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + "rnn", **states)
        attr = {"__layout__": "LNC"}
        if not self._get_next_state:
            outputs, states = rnn, []
        elif self._mode == "lstm":
            rnn[1]._set_attr(**attr)
            rnn[2]._set_attr(**attr)
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            rnn[1]._set_attr(**attr)
            outputs, states = rnn[0], [rnn[1]]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a SequentialRNNCell of unfused cells (same variable names after
        ``unpack_weights``)."""
        stack = SequentialRNNCell()
        nh = self._num_hidden

        def get_cell(cell_prefix):
            if self._mode == "lstm":
                return LSTMCell(nh, prefix=cell_prefix)
            if self._mode == "gru":
                return GRUCell(nh, prefix=cell_prefix)
            return RNNCell(nh, activation=self._mode[4:], prefix=cell_prefix)

        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(get_cell("%sl%d_" % (self._prefix, i)),
                                            get_cell("%sr%d_" % (self._prefix, i)),
                                            output_prefix="%sbi_l%d_" % (self._prefix, i)))
            else:
                stack.add(get_cell("%sl%d_" % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix="%s_dropout%d_" % (self._prefix, i)))
        return stack


class SequentialRNNCell(BaseRNNCell):
    """Sequentially stacking multiple RNN cells.

    Parameters
    ----------
    params : RNNParams, optional
        Container for weight sharing between cells (created if None).
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append a cell into the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            assert cell._own_params, \
                "Either specify params for SequentialRNNCell or child cells, not both."
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            assert not isinstance(cell, BidirectionalCell)
            n = len(cell.state_info)
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1
                                         else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Applies dropout on input.

    Parameters
    ----------
    dropout : float
    prefix : str, default ``'dropout_'``
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        assert isinstance(dropout, _numeric), "dropout probability must be a number"
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class for modifier cells: wraps ``base_cell`` (sharing its parameters), which
    cannot be called directly any more."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Applies Zoneout on the base cell: outputs and states keep their previous values with
    probability ``zoneout_outputs`` / ``zoneout_states`` in training."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        assert not isinstance(base_cell, FusedRNNCell), \
            "FusedRNNCell doesn't support zoneout. Please unfuse first."
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
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev_output = (self.prev_output if self.prev_output is not None
                       else call_state_func(symbol.zeros, None, shape=(0, 0)))
        output = (symbol.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([symbol.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Google NMT's residual connections)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name="%s_plus_residual" % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs)
        self.base_cell._modified = True
        merge_outputs = (isinstance(outputs, symbol.Symbol) if merge_outputs is None
                         else merge_outputs)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name="%s_plus_residual" % outputs.name)
        else:
            outputs = [symbol.elemwise_add(o, i, name="%s_plus_residual" % o.name)
                       for o, i in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """Bidirectional RNN cell: ``l_cell`` forwards, ``r_cell`` over the reversed sequence
    (only ``unroll``).

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams, optional
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            assert l_cell._own_params and r_cell._own_params, \
                "Either specify params for BidirectionalCell or child cells, not both."
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        assert not self._modified, \
            "After applying modifier cells (e.g. DropoutCell) the base cell cannot be called " \
            "directly. Call the modifier cell instead."
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol)
                             and isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=("%sout" % self._output_prefix if merge_outputs
                                       else "%st%d" % (self._output_prefix, i)))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]


# --- convolutional cells ------------------------------------------------------------------------
class BaseConvRNNCell(BaseRNNCell):
    """Abstract base class for convolutional RNN cells (i2h and h2h are Convolutions)."""

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix="", params=None,
                 conv_layout="NCHW"):
        super().__init__(prefix=prefix, params=params)
        self._h2h_kernel = h2h_kernel
        assert (self._h2h_kernel[0] % 2 == 1) and (self._h2h_kernel[1] % 2 == 1), \
            "Only support odd number, get h2h_kernel= %s" % str(h2h_kernel)
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2,
                         h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        conv = symbol.Convolution(data=symbol.Variable("data"), num_filter=self._num_hidden,
                                  kernel=self._i2h_kernel, stride=self._i2h_stride,
                                  pad=self._i2h_pad, dilate=self._i2h_dilate, layout=conv_layout)
        state_shape = conv.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(state_shape[1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout},
                {"shape": self._state_shape, "__layout__": self._conv_layout}]

    def _conv_forward(self, inputs, states, name):
        n = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name="%si2h" % name, data=inputs, num_filter=n,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name="%sh2h" % name, data=states[0], num_filter=n,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional RNN cell."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", activation=_LEAKY,
                 prefix="ConvRNN_", params=None, conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix, params, conv_layout)

    @property
    def _gate_names(self):
        return ("",)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (Shi et al. 2015)."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", activation=_LEAKY,
                 prefix="ConvLSTM_", params=None, conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix, params, conv_layout)

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        sl = symbol.SliceChannel(i2h + h2h, num_outputs=4, axis=self._conv_layout.find("C"),
                                 name="%sslice" % name)
        in_gate = symbol.Activation(sl[0], act_type="sigmoid", name="%si" % name)
        forget_gate = symbol.Activation(sl[1], act_type="sigmoid", name="%sf" % name)
        in_transform = self._get_activation(sl[2], self._activation, name="%sc" % name)
        out_gate = symbol.Activation(sl[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name="%sstate" % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation),
                                       name="%sout" % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", activation=_LEAKY,
                 prefix="ConvGRU_", params=None, conv_layout="NCHW"):
        super().__init__(input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                         i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         activation, prefix, params, conv_layout)

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}]

    def __call__(self, inputs, states):
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name="%s_z_act" % name)
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation,
                                          name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                        name="%sout" % name)
        return next_h, [next_h]


# --- the fused cell's initializer -----------------------------------------------------------------
@init.register
class FusedRNN(init.Initializer):
    """Initializes a FusedRNNCell's flat parameter vector gate by gate: ``init`` (or the
    global initializer) on each unpacked weight and bias, ``forget_bias`` on LSTM forget-gate
    biases (MXNet's ``mx.init.FusedRNN``).

    Parameters
    ----------
    init : Initializer, str (its JSON) or None
    num_hidden, num_layers, mode, bidirectional, forget_bias :
        As the FusedRNNCell's.
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            klass, kwargs = json.loads(init)
            init = _init_create(klass, kwargs)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        cell = FusedRNNCell(self._num_hidden, self._num_layers, self._mode, self._bidirectional,
                            forget_bias=self._forget_bias, prefix="")
        args = cell.unpack_weights({"parameters": arr})
        for name in args:
            arg_desc = init.InitDesc(name, global_init=desc.global_init)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                args[name][:] = self._forget_bias
            elif self._init is None:
                desc.global_init(arg_desc, args[name])
            else:
                self._init(arg_desc, args[name])
        arr[:] = cell.pack_weights(args)["parameters"]


def _init_create(klass, kwargs):
    return init.create(klass.lower(), **kwargs)
