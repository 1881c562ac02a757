"""Execution plans: a node list turned once into straight-line steps over numbered slots, with
each intermediate freed after its last use, and computed in place over an input that nothing
else reads (MXNet's in-place option: e.g. an activation over its convolution's output)."""
from __future__ import annotations

from ..base import MXNetError, shape_str
from ..ops.registry import OpContext


# Whether plans may run steps in place (tests switch it off to compare with the plain plan).
INPLACE = {"enabled": True}


class Step:
    __slots__ = ("node", "forward", "params", "ins", "outs", "single", "free", "inplace")

    def __init__(self, node, ins, outs):
        self.node = node
        self.forward = node.op.forward
        self.params = node.params
        self.ins = tuple(ins)
        self.outs = tuple(outs)
        self.single = len(outs) == 1
        self.free = ()
        self.inplace = None  # the op's inplace_forward, when this step may overwrite ins[0]


class Plan:
    """Steps for ``nodes`` (a topological order of op nodes) over a shared slot table.

    ``slot_of`` maps ``(id(node), i)`` to a slot index and is extended here for new entries.
    ``keep`` lists slots that must survive the plan (outputs, values needed later).
    """

    def __init__(self, nodes, slot_of: dict, keep=()):
        self.steps = []
        for n in nodes:
            if n.op is None:
                continue
            ins = [slot_of[(id(s), i)] for s, i in n.inputs]
            outs = []
            for i in range(n.num_outputs):
                key = (id(n), i)
                if key not in slot_of:
                    slot_of[key] = len(slot_of)
                outs.append(slot_of[key])
            self.steps.append(Step(n, ins, outs))
        self._plan_frees(set(keep))

    def _plan_frees(self, keep):
        last = {}
        for k, st in enumerate(self.steps):
            for s in st.ins:
                last[s] = k
            for s in st.outs:
                last.setdefault(s, k)
        frees = {}
        for s, k in last.items():
            if s not in keep:
                frees.setdefault(k, []).append(s)
        for k, st in enumerate(self.steps):
            st.free = tuple(frees.get(k, ()))
        self._plan_inplace(keep)

    def _plan_inplace(self, keep):
        """A step overwrites its first input when the op can, that value was made fresh by a
        step of this plan (no aliases: not a variable, a view or a value from elsewhere), this
        step is its only reader, and it is not kept."""
        producer, readers = {}, {}
        for st in self.steps:
            for s in st.ins:
                readers[s] = readers.get(s, 0) + 1
            for s in st.outs:
                producer[s] = st
        for st in self.steps:
            st.inplace = None
            op = st.node.op
            if op.inplace_forward is None or not st.single or not st.ins:
                continue
            s = st.ins[0]
            src = producer.get(s)
            if (src is not None and src.node.op.fresh_output and readers.get(s) == 1
                    and s not in keep and s in st.free):
                st.inplace = op.inplace_forward

    def run(self, vals: list, oc: OpContext, monitor=None):
        """Execute every step; ``vals`` is the slot table (variables already filled)."""
        inplace = INPLACE["enabled"] and monitor is None  # a monitor sees every value
        for st in self.steps:
            fwd = st.inplace if (inplace and st.inplace is not None) else st.forward
            try:
                res = fwd(st.params, [vals[i] for i in st.ins], oc)
            except MXNetError as e:
                raise MXNetError(f"while running {st.node.name} ({st.node.op.name}): {e}") from None
            except (RuntimeError, ValueError, IndexError) as e:
                shapes = ", ".join(shape_str(vals[i].shape) for i in st.ins)
                raise MXNetError(f"while running {st.node.name} ({st.node.op.name}) on inputs of "
                                 f"shapes {shapes}: {str(e).splitlines()[0]}") from None
            if st.single:
                vals[st.outs[0]] = res
            else:
                for s, r in zip(st.outs, res):
                    vals[s] = r
            if monitor is not None:
                monitor(st, vals)
            for s in st.free:
                vals[s] = None

    def to_python(self) -> str:
        """Straight-line pseudo-code of the plan (for debugging)."""
        lines = []
        for st in self.steps:
            outs = ", ".join(f"v{s}" for s in st.outs)
            ins = ", ".join(f"v{s}" for s in st.ins)
            params = ", ".join(f"{k}={v!r}" for k, v in st.node.given.items())
            lines.append(f"{outs} = {st.node.op.name}({ins}{', ' if params and ins else ''}{params})"
                         f"  # {st.node.name}" + (f" (in place over v{st.ins[0]})" if st.inplace else ""))
            if st.free:
                lines.append("del " + ", ".join(f"v{s}" for s in st.free))
        return "\n".join(lines)
