"""Convert an MXNet checkpoint to ONNX or to a PyTorch program that runs without neomx.

Usage::

    python -m neomx.convert PREFIX EPOCH --to onnx|torch --shape data=1,3,224,224 [--out FILE]

reads ``PREFIX-symbol.json`` and ``PREFIX-EPOCH.params`` (``mx.model.save_checkpoint``'s files,
MXNet's or neomx's) and writes

* ``--to onnx``: an ONNX model (opset 17), default ``PREFIX-EPOCH.onnx``;
* ``--to torch``: a ``torch.export`` ExportedProgram saved with ``torch.export.save``, default
  ``PREFIX-EPOCH.pt2``. Load it with plain torch: ``torch.export.load(path).module()`` is an
  ``nn.Module`` (inference mode) whose ``state_dict()`` keeps MXNet's parameter names.

``--shape`` is given once per data input (the label of a loss head is no input); ``--type``
likewise (default float32). Operators that cannot be converted are named in one error.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .base import MXNetError


def _name_value(text, what):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE for {what}, got {text!r}")
    return name, value


def _shape(text):
    name, value = _name_value(text, "--shape")
    try:
        return name, tuple(int(d) for d in value.replace("(", "").replace(")", "").split(",") if d)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad shape {value!r} (expected e.g. data=1,3,224,224)")


def _parser():
    ap = argparse.ArgumentParser(prog="python -m neomx.convert", description=__doc__.split("\n")[0])
    ap.add_argument("prefix", help="checkpoint prefix (PREFIX-symbol.json, PREFIX-EPOCH.params)")
    ap.add_argument("epoch", type=int, help="checkpoint epoch")
    ap.add_argument("--to", required=True, choices=("onnx", "torch"), help="target format")
    ap.add_argument("--shape", type=_shape, action="append", default=[], metavar="NAME=D0,D1,...",
                    help="shape of a data input (once per input)")
    ap.add_argument("--type", type=lambda t: _name_value(t, "--type"), action="append",
                    default=[], metavar="NAME=DTYPE", help="dtype of a data input (float32)")
    ap.add_argument("--out", help="output file (PREFIX-EPOCH.onnx / PREFIX-EPOCH.pt2)")
    return ap


def convert(prefix, epoch, to, shapes, types=None, out=None):
    """Convert the checkpoint; returns the path written."""
    from . import model as _model
    from .export.graph import prepare
    sym, arg_params, aux_params = _model.load_checkpoint(prefix, epoch)
    types = dict(types or {})
    inputs = prepare(sym, arg_params, aux_params).inputs
    unknown = sorted(set(shapes) - set(inputs))
    missing = [n for n in inputs if n not in shapes]
    if unknown or missing:
        raise MXNetError(f"the model's data inputs are {inputs}: "
                         + (f"no input named {unknown}; " if unknown else "")
                         + (f"give --shape for {missing}" if missing else ""))
    dtypes = [np.dtype(types.get(n, "float32")) for n in inputs]
    if to == "onnx":
        from .onnx import export_model
        out = out or f"{prefix}-{epoch:04d}.onnx"
        export_model(sym, [arg_params, aux_params], [shapes[n] for n in inputs], dtypes,
                     onnx_file_path=out)
        return out
    import torch
    from .export import to_torch
    out = out or f"{prefix}-{epoch:04d}.pt2"
    gm = to_torch(sym, arg_params, aux_params, input_shapes=shapes).eval()
    example = tuple(torch.zeros(shapes[n], dtype=torch.from_numpy(np.zeros(0, dt)).dtype)
                    for n, dt in zip(inputs, dtypes))
    program = torch.export.export(gm, example)
    torch.export.save(program, out)
    return out


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        out = convert(args.prefix, args.epoch, args.to, dict(args.shape), dict(args.type),
                      args.out)
    except (MXNetError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
