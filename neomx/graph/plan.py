"""Memory planning: graph nodes turned into straight-line steps over numbered slots, each value
freed after its last use, and a step computed in place over an input nothing else reads
(MXNet's in-place option: e.g. an activation over its convolution's output).

The passes are small functions (:func:`make_steps`, :func:`plan_frees`, :func:`plan_inplace`);
:class:`Plan` holds their result for one list of steps and runs it.
"""
from __future__ import annotations

import time

from .. import profiler as _profiler
from ..base import MXNetError, shape_str
from ..ops.registry import OpContext

_PROF = _profiler.STATE  # the profiler's hook: one attribute test per plan run while it is off


# Whether plans may run steps in place (tests switch it off to compare with the plain plan; a
# monitor, which sees every value, does too).
INPLACE = {"enabled": True}
# Whether plans that run steps in place may also fuse producers with their activations (see
# plan_fusion; fused tanh/sigmoid and GEMMs agree with the separate kernels to a few ulps).
FUSE = {"enabled": True}


class Step:
    """One op node applied to slots: ``outs = forward(params, [vals[i] for i in ins])``.
    ``device`` is the torch device the step runs on when it differs from the executor's own
    (model-parallel placement); its inputs are copied there first."""

    __slots__ = ("node", "forward", "params", "ins", "outs", "single", "free", "inplace", "device",
                 "fused_from")

    def __init__(self, node, ins, outs, device=None):
        self.node = node
        self.forward = node.op.forward
        self.params = node.params
        self.ins = tuple(ins)
        self.outs = tuple(outs)
        self.single = len(outs) == 1
        self.free = ()
        self.inplace = None  # the op's inplace_forward, when this step may overwrite ins[0]
        self.device = device
        self.fused_from = None  # the producer node a fused step computes first (plan_fusion)


def make_steps(nodes, slot_of, devices=None) -> list[Step]:
    """Steps for the op nodes of ``nodes`` (a topological order); ``slot_of(node, i)`` gives an
    entry's slot, ``devices`` (optional) a node's torch device when it is placed elsewhere."""
    steps = []
    for n in nodes:
        if n.op is None:
            continue
        ins = [slot_of(s, i) for s, i in n.inputs]
        outs = [slot_of(n, i) for i in range(n.num_outputs)]
        steps.append(Step(n, ins, outs, None if devices is None else devices.get(n)))
    return steps


def plan_frees(steps, keep) -> list[tuple]:
    """For each step, the slots whose last use it is (those in ``keep`` are never freed)."""
    last = {}
    for k, st in enumerate(steps):
        for s in st.ins:
            last[s] = k
        for s in st.outs:
            last.setdefault(s, k)
    frees = [[] for _ in steps]
    for s, k in last.items():
        if s not in keep:
            frees[k].append(s)
    return [tuple(f) for f in frees]


def _producers_and_readers(steps):
    """({slot: the step computing it}, {slot: how many steps read it})."""
    producer, readers = {}, {}
    for st in steps:
        for s in st.ins:
            readers[s] = readers.get(s, 0) + 1
        for s in st.outs:
            producer[s] = st
    return producer, readers


def plan_inplace(steps, keep, frees) -> list:
    """For each step, the op's ``inplace_forward`` when it may overwrite its first input: the
    op can, the step runs the op's own forward (not a storage-type variant), that value was
    made fresh by a step of this plan (no aliases: not a variable, a view
    or a value from elsewhere), this step is its only reader, it is freed here and not kept, and
    both run on the same device."""
    producer, readers = _producers_and_readers(steps)
    out = []
    for st, free in zip(steps, frees):
        fn = st.node.op.inplace_forward
        if fn is None or not st.single or not st.ins or st.forward is not st.node.op.forward:
            # (steps given other functions: sparse storage, see storage.py)
            out.append(None)
            continue
        s = st.ins[0]
        src = producer.get(s)
        ok = (src is not None and src.node.op.fresh_output and readers.get(s) == 1
              and s not in keep and s in free and src.device == st.device)
        out.append(fn if ok else None)
    return out


def plan_fusion(steps, keep):
    """The steps with each producer + activation pair whose intermediate value nothing else
    needs (one reader, not kept, same device, the ops' own forwards) replaced by one step
    running a fused kernel (:mod:`neomx.ops.fused_kernels`) at the activation's place; None
    when no pair fuses. Frees must be planned already: the producer's move to the fused step."""
    from ..ops.fused_kernels import activation_post_op
    producer, readers = _producers_and_readers(steps)
    fused, gone = {}, set()
    for st in steps:
        if not st.single or len(st.ins) != 1 or st.forward is not st.node.op.forward:
            continue
        s = st.ins[0]
        src = producer.get(s)
        if (src is None or not src.single or src.forward is not src.node.op.forward
                or readers.get(s) != 1 or s in keep or src.device != st.device):
            continue
        fn = activation_post_op(src.node, st.node)
        if fn is None:
            continue
        step = Step(st.node, src.ins, st.outs, st.device)
        step.forward, step.params, step.fused_from = fn, None, src.node
        step.free = tuple(dict.fromkeys(src.free + st.free))
        fused[id(st)] = step
        gone.add(id(src))
    if not fused:
        return None
    return [fused.get(id(st), st) for st in steps if id(st) not in gone]


class Plan:
    """A list of steps with their frees and in-place choices, for a fixed ``keep`` set (slots
    that must survive the plan: outputs, values needed later). ``fused``: the same steps with
    producer + activation pairs fused (None: none), run when in-place steps are."""

    def __init__(self, steps, keep=()):
        self.steps = list(steps)
        self.keep = frozenset(keep)
        frees = plan_frees(self.steps, self.keep)
        inplace = plan_inplace(self.steps, self.keep, frees)
        for st, f, ip in zip(self.steps, frees, inplace):
            st.free, st.inplace = f, ip
        self.fused = plan_fusion(self.steps, self.keep)

    def reads(self) -> set:
        return {s for st in self.steps for s in st.ins}

    def run(self, vals: list, oc: OpContext, monitor=None, contexts=None):
        """Execute every step; ``vals`` is the slot table (variables already filled).
        ``contexts`` maps a step's device to its OpContext (placed steps only)."""
        inplace = INPLACE["enabled"] and monitor is None  # a monitor sees every value
        prof = _PROF.symbolic
        for st in self._running(inplace):
            fwd = st.inplace if (inplace and st.inplace is not None) else st.forward
            if st.device is None:
                ins, soc = [vals[i] for i in st.ins], oc
            else:
                dev = st.device
                ins = [t if t.device == dev else t.to(dev) for t in (vals[i] for i in st.ins)]
                soc = contexts[dev]
            if prof:
                t0 = time.perf_counter_ns()
            try:
                res = fwd(st.params, ins, soc)
                if prof:
                    _profiler.step_event(st.node, t0, res, st.fused_from)
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

    def _running(self, inplace) -> list:
        """The steps a run executes: fused where in-place steps and fusion are on."""
        if inplace and self.fused is not None and FUSE["enabled"]:
            return self.fused
        return self.steps

    def to_python(self) -> str:
        """Straight-line pseudo-code of the plan as it runs now (for debugging)."""
        lines = []
        for st in self._running(INPLACE["enabled"]):
            outs = ", ".join(f"v{s}" for s in st.outs)
            ins = ", ".join(f"v{s}" for s in st.ins)
            if st.fused_from is not None:
                src = st.fused_from
                lines.append(f"{outs} = {src.op.name}+{st.node.op.name}({ins})  # {src.name} + "
                             f"{st.node.name} (fused, act_type={st.node.params.act_type!r})")
                if st.free:
                    lines.append("del " + ", ".join(f"v{s}" for s in st.free))
                continue
            params = ", ".join(f"{k}={v!r}" for k, v in st.node.given.items())
            where = f" on {st.device}" if st.device is not None else ""
            lines.append(f"{outs} = {st.node.op.name}({ins}{', ' if params and ins else ''}{params})"
                         f"  # {st.node.name}{where}"
                         + (f" (in place over v{st.ins[0]})" if st.inplace else ""))
            if st.free:
                lines.append("del " + ", ".join(f"v{s}" for s in st.free))
        return "\n".join(lines)
