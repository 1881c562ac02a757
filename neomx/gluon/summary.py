"""``Block.summary``: one forward with hooks on every layer, printed as MXNet 1.9.1 prints it."""
from __future__ import annotations

from collections import OrderedDict

from ..ndarray import NDArray
from .parameter import GluonAssertionError


def _flatten(args):
    if not isinstance(args, (list, tuple)):
        return [args], 0
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        r, args = _regroup(args, f)
        ret.append(r)
    return ret, args


def _shape_str(args):
    flat, fmts = _flatten(args)
    shapes = [x.shape if isinstance(x, NDArray) else x for x in flat]
    shapes = _regroup(shapes, fmts)[0]
    return (str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)).replace("L", "")


def print_summary(block, inputs):
    from .block import HybridBlock
    from .nn.basic_layers import HybridSequential, Sequential

    summary = OrderedDict()
    seen = set()
    hooks = []

    def hook(blk, _, outputs):
        key = f"{blk.__class__.__name__}-{len(summary)}"
        row = summary[key] = OrderedDict()
        row["output_shape"] = _shape_str(outputs)
        n = trainable = shared = 0
        for p in blk.params.values():
            size = p.data().size
            n += size
            trainable += 0 if p.grad_req == "null" else size
            if p in seen:
                shared += size
            else:
                seen.add(p)
        row["n_params"], row["trainable"], row["shared"] = n, trainable, shared

    def register(blk):
        if isinstance(blk, HybridBlock) and blk._active:
            raise GluonAssertionError(f'"{blk.name}" must not be hybridized to print summary.')
        if not isinstance(blk, (Sequential, HybridSequential)):
            hooks.append(blk.register_forward_hook(hook))

    summary["Input"] = OrderedDict(output_shape=_shape_str(inputs), n_params=0, trainable=0,
                                   shared=0)
    try:
        block.apply(register)
        block(*inputs)
        fmt = "{:>20}  {:>42} {:>15}"
        print("-" * 80)
        print(fmt.format("Layer (type)", "Output Shape", "Param #"))
        print("=" * 80)
        total = trainable = shared = 0
        for layer, row in summary.items():
            print(fmt.format(layer, str(row["output_shape"]), row["n_params"]))
            total += row["n_params"]
            trainable += row["trainable"]
            shared += row["shared"]
        print("=" * 80)
        print("Parameters in forward computation graph, duplicate included")
        print("   Total params: " + str(total))
        print("   Trainable params: " + str(trainable))
        print("   Non-trainable params: " + str(total - trainable))
        print("Shared params in forward computation graph: " + str(shared))
        print("Unique parameters in model: " + str(total - shared))
        print("-" * 80)
    finally:
        for h in hooks:
            h.detach()
