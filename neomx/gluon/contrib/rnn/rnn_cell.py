"""Contributed recurrent cells (MXNet 1.9.1's ``gluon.contrib.rnn.rnn_cell``):
``VariationalDropoutCell`` (one dropout mask per sequence), ``LSTMPCell`` (an LSTM with a
projected recurrent state) and ``dynamic_unroll`` (a cell run over a sequence by
``contrib.foreach``)."""
from __future__ import annotations

from ....base import _as_list
from ...parameter import tensor_types
from ...rnn import BidirectionalCell, HybridRecurrentCell, ModifierCell, SequentialRNNCell
from ...rnn.rnn_cell import _format_sequence, _get_begin_state, _mask_sequence_variable_length

__all__ = ["VariationalDropoutCell", "LSTMPCell"]


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani, https://arxiv.org/abs/1512.05287) on a base
    cell: the same dropout masks at every step, separate masks for inputs, the first state
    and outputs.

    The masks are drawn at the first step and kept until ``reset()`` (``unroll`` resets), so
    a cell stepped by hand needs ``reset()`` after each sequence.

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs : float, default 0.
    drop_states : float, default 0.
        Dropout rate of the first state (h); 0 for none.
    drop_outputs : float, default 0.
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        assert not drop_states or not isinstance(base_cell, BidirectionalCell), \
            "BidirectionalCell doesn't support variational state dropout. " \
            "Please add VariationalDropoutCell to the cells underneath instead."
        assert not drop_states \
            or not isinstance(base_cell, SequentialRNNCell) \
            or not getattr(base_cell, "_bidirectional", False), \
            "Bidirectional SequentialRNNCell doesn't support variational state dropout. " \
            "Please add VariationalDropoutCell to the cells underneath instead."
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _initialize_input_masks(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)

    def _initialize_output_mask(self, F, output):
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)

    def hybrid_forward(self, F, inputs, states):
        cell = self.base_cell
        self._initialize_input_masks(F, inputs, states)
        if self.drop_states:
            states = list(states)
            # h is always the first state: only it is dropped
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = cell(inputs, states)
        self._initialize_output_mask(F, next_output)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self):
        s = "{name}(p_out = {drop_outputs}, p_state = {drop_states})"
        return s.format(name=self.__class__.__name__, **self.__dict__)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unrolls the cell over ``length`` steps (see ``RecurrentCell.unroll``). Without
        state dropout, input and output dropout run once on the whole sequence with the mask
        broadcast over the time axis."""
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge_outputs = isinstance(outputs, tensor_types) if merge_outputs is None else \
            merge_outputs
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""LSTM cell with a projected recurrent state (LSTMP, https://arxiv.org/abs/1402.1128):
    an LSTM step whose output and recurrent state is :math:`r_t = W_{hr} h_t`.

    Parameters
    ----------
    hidden_size : int
        Units of the cell state.
    projection_size : int
        Units of the output (and recurrent) state.
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
    prefix : str, default ``'lstmp_'``
    params : ParameterDict or None

    States are ``[r, c]`` of shapes ``(batch, projection_size)`` and ``(batch, hidden_size)``.

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.gluon.contrib.rnn.LSTMPCell(6, 2)
    >>> cell.initialize()
    >>> out, states = cell(mx.nd.ones((3, 4)), cell.begin_state(batch_size=3))
    >>> out.shape, states[1].shape
    ((3, 2), (3, 6))
    """

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        g = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(g, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(g, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        proj_shape = self.h2r_weight.shape
        mapping = "{0} -> {1} -> {2}".format(shape[1] if shape[1] else None, shape[0],
                                             proj_shape[0])
        return "{name}({mapping})".format(name=self.__class__.__name__, mapping=mapping)

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = "t%d_" % self._counter
        n = self._hidden_size * 4
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        gates = i2h + h2h
        sl = F.SliceChannel(gates, num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(sl[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(sl[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(sl[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(sl[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Unrolls ``cell`` over a whole sequence with ``F.contrib.foreach`` (one graph node
    for the loop instead of one copy of the cell per step).

    Parameters
    ----------
    cell : RecurrentCell
    inputs : Symbol or NDArray
        ``(length, batch, ...)`` for layout 'TNC' (faster), ``(batch, length, ...)`` for 'NTC'.
    begin_state : list of Symbol or NDArray
    drop_inputs, drop_outputs : float, default 0.
        Dropout rates, one mask broadcast over the time axis.
    layout : str, default 'TNC'
    valid_length : Symbol, NDArray or None
        ``(batch,)`` lengths: later steps keep the last valid state and give zero outputs.

    Returns
    -------
    outputs : Symbol or NDArray, in ``layout``
    states : list of Symbol or NDArray

    Examples
    --------
    >>> import neomx as mx
    >>> cell = mx.gluon.rnn.LSTMCell(5, prefix='rnn_')
    >>> cell.initialize()
    >>> x = mx.nd.ones((3, 2, 4))
    >>> states = [mx.nd.zeros((2, 5)), mx.nd.zeros((2, 5))]
    >>> out, states = mx.gluon.contrib.rnn.rnn_cell.dynamic_unroll(
    ...     cell, x, states, valid_length=mx.nd.array([2, 3]))
    >>> out.shape, float(out[2, 0].abs().sum().asscalar())
    ((3, 2, 5), 0.0)
    """
    # merge is always True, so the length is not needed
    inputs, axis, F, _ = _format_sequence(0, inputs, layout, True)
    if axis != 0:
        axes = list(range(len(layout)))
        axes[0], axes[axis] = axes[axis], axes[0]
        inputs = F.transpose(inputs, axes=axes)
    states = begin_state
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if valid_length is None:
        def loop_body(inputs, states):
            return cell(inputs, states)
    else:
        states = list(_as_list(states))
        states.append(F.zeros((1)))

        def loop_body(inputs, states):
            cell_states, iter_no = states[:-1], states[-1]
            out, new_states = cell(inputs, cell_states)
            for i, state in enumerate(cell_states):
                new_states[i] = F.where(F.broadcast_greater(valid_length, iter_no),
                                        new_states[i], state)
            new_states.append(iter_no + 1)
            return out, new_states

    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axis != 0:
        outputs = F.transpose(outputs, axes)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=axis)
        # the last state is the step counter
        return outputs, states[:-1]
    return outputs, states
