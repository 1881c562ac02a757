"""The reduce-precision graph pass behind ``amp.convert_symbol`` (MXNet's ReducePrecision).

Nodes are visited in topological order and copied; the pass tracks which original output
entries already have a target-dtype (``low``) or float32 (``fp32``) version in the new graph,
and inserts ``amp_cast``/``amp_multicast`` nodes the way MXNet 1.9.1 does:

* float32 ops (and excluded names): inputs not known in float32 get ``amp_cast`` to float32
  (variables are assumed float32 already); outputs are float32.
* target ops: the op's type inference with its first input in the target dtype says which
  inputs must follow (cast, unless already known low, or an optional parameter with
  ``cast_optional_params``, or an input the op wants in float32) and which outputs are low.
* widest-type ops: all inputs known -> cast the low ones to float32 if any is float32;
  otherwise one ``amp_multicast`` of all inputs.
* conditional float32 ops (parameter value matches): as float32 ops, variables cast too.
* any other op keeps its inputs; its outputs get the type its inference gives from the known
  input types.

The graph's heads are then made float32 as a float32 op's inputs would be.
"""
from __future__ import annotations

import numpy as np

from ...base import bfloat16
from ...ops import registry as _reg
from ...ir import Node, topo_order

_FP32 = np.float32


def _param_node(op_name, name, params, given, inputs):
    op = _reg.get(op_name)
    p, _ = op.parse_params(params, name)
    return Node(op, name, p, given, {}, tuple(inputs))


class _Converter:
    def __init__(self, target, low_ops, fp32_ops, widest_ops, conditional, excluded,
                 data_names, cast_optional, output_named):
        self.target = target                  # 'float16' or 'bfloat16'
        self.low_np = bfloat16 if target == "bfloat16" else np.float16
        self.low_ops, self.fp32_ops, self.widest_ops = set(low_ops), set(fp32_ops), set(widest_ops)
        self.conditional = conditional        # op name -> [(param, [values])]
        self.excluded, self.data_names = set(excluded), set(data_names)
        self.cast_optional, self.output_named = cast_optional, set(output_named)
        self.mirror, self.low, self.fp32 = {}, {}, {}

    # --- helpers ----------------------------------------------------------------------------
    def _entry(self, e):
        return (self.mirror[e[0]], e[1])

    def _suffix(self, e):
        node, i = e
        if node.op is None:
            return ""
        if node.op.name in self.output_named:
            return "_" + node.op.list_outputs(node.params)[i]
        return "_" + str(i)

    def _cast(self, e, dtype, table):
        """An amp_cast of entry ``e`` to ``dtype`` (shared through ``table``)."""
        if e not in table:
            name = e[0].name + self._suffix(e) + "_amp_cast_" + dtype
            p, _ = _reg.get("amp_cast").parse_params({"dtype": dtype}, name)
            table[e] = (Node(_reg.get("amp_cast"), name, p, {"dtype": dtype}, {},
                             (self._entry(e),)), 0)
        return table[e]

    def _to_fp32(self, e, cast_vars):
        if e in self.fp32:
            return self.fp32[e]
        if e[0].op is None and not cast_vars:
            return self._entry(e)
        return self._cast(e, "float32", self.fp32)

    def _known(self, e):
        if e in self.fp32:
            return _FP32
        if e in self.low:
            return self.low_np
        return None

    def _infer(self, node, in_types):
        try:
            ins, outs = node.op.infer_type(node.params, list(in_types),
                                           [None] * node.num_outputs)
        except Exception:  # noqa: BLE001 -- unknown stays unknown, as MXNet's partial inference
            return list(in_types), [None] * node.num_outputs
        return list(ins), list(outs)

    def _record_outputs(self, node, new, out_types):
        for i, t in enumerate(out_types):
            if t is None:
                continue
            if np.dtype(t) == np.dtype(self.low_np):
                self.low[(node, i)] = (new, i)
            elif np.dtype(t) == np.dtype(_FP32):
                self.fp32[(node, i)] = (new, i)

    def _is_conditional(self, node):
        for param, values in self.conditional.get(node.op.name, ()):
            if param in node.given and str(node.given[param]) in values:
                return True
        return False

    # --- the visit ------------------------------------------------------------------------------
    def visit(self, node):
        excluded = node.name in self.excluded
        if node.op is None:
            attrs = dict(node.attrs)
            if node.name not in self.data_names:
                attrs.pop("__dtype__", None)  # a parameter's type is inferred afresh (MXNet's)
            new = node.replace(attrs=attrs)
            if excluded:
                self.fp32[(node, 0)] = (new, 0)
            self.mirror[node] = new
            return
        if node.op.name in self.fp32_ops or excluded:
            inputs = [self._to_fp32(e, False) for e in node.inputs]
            new = node.replace(inputs=tuple(inputs), attrs=dict(node.attrs))
            self._record_outputs(node, new, [_FP32] * node.num_outputs)
        elif node.op.name in self.low_ops:
            in_types = [None] * len(node.inputs)
            in_types[0] = self.low_np
            in_types, out_types = self._infer(node, in_types)
            inputs = []
            for e, t in zip(node.inputs, in_types):
                if e in self.low:
                    inputs.append(self.low[e])
                elif ((self.cast_optional and e[0].op is None and e[0].name not in self.data_names)
                      or (t is not None and np.dtype(t) == np.dtype(_FP32))):
                    inputs.append(self._entry(e))
                else:
                    inputs.append(self._cast(e, self.target, self.low))
            new = node.replace(inputs=tuple(inputs), attrs=dict(node.attrs))
            self._record_outputs(node, new, out_types)
        elif node.op.name in self.widest_ops:
            known = [self._known(e) for e in node.inputs]
            if node.inputs and all(t is not None for t in known):
                if any(np.dtype(t) == np.dtype(_FP32) for t in known):
                    inputs = [self._cast(e, "float32", self.fp32) if e not in self.fp32
                              else self.fp32[e] for e in node.inputs]
                    kind = _FP32
                else:
                    inputs, kind = [self.low[e] for e in node.inputs], self.low_np
                new = node.replace(inputs=tuple(inputs), attrs=dict(node.attrs))
                self._record_outputs(node, new, [kind] * node.num_outputs)
            else:
                first = node.inputs[0]
                n = len(node.inputs)
                name = first[0].name + self._suffix(first) + "_amp_multicast"
                mc = _param_node("amp_multicast", name, {"num_outputs": str(n)},
                                 {"num_outputs": str(n)}, [self._entry(e) for e in node.inputs])
                new = node.replace(inputs=tuple((mc, i) for i in range(n)),
                                   attrs=dict(node.attrs))
        elif self._is_conditional(node):
            inputs = [self._to_fp32(e, True) for e in node.inputs]
            new = node.replace(inputs=tuple(inputs), attrs=dict(node.attrs))
            self._record_outputs(node, new, [_FP32] * node.num_outputs)
        else:
            new = node.replace(inputs=tuple(self._entry(e) for e in node.inputs),
                               attrs=dict(node.attrs))
            # variables count as unknown here, even when a cast of theirs is known
            _, out_types = self._infer(node, [None if e[0].op is None else self._known(e)
                                              for e in node.inputs])
            self._record_outputs(node, new, out_types)
        self.mirror[node] = new

    def run(self, outputs):
        for node in topo_order(outputs):
            self.visit(node)
        return [self._to_fp32(e, False) for e in outputs]


def reduce_precision(outputs, **kwargs):
    """The converted graph's output entries (see the module docstring)."""
    return _Converter(**kwargs).run(outputs)
