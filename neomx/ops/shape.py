"""Shape manipulation: Reshape (MXNet's special codes), Flatten."""
from __future__ import annotations

import math

from .registry import OpDef, Param, ShapeError, register, _sh


def reshape_shape(src: tuple, codes: tuple, reverse: bool = False) -> tuple:
    """Apply MXNet's reshape codes to ``src``.

    Codes are matched left to right against the input dims: n>0 literal; 0 copy one dim;
    -1 infer (once); -2 copy the rest; -3 merge two dims; -4 split one dim into the next two
    codes (one of them may be -1). ``reverse`` matches from the right.
    """
    src, codes = tuple(src), tuple(codes)
    if reverse:  # MXNet reverses both lists as they are, -4 groups included
        src = src[::-1]
        codes = codes[::-1]
    out, inf_idx, i, j = [], -1, 0, 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            _need(src, j, codes)
            out.append(src[j])
            j += 1
        elif c == -1:
            if inf_idx >= 0:
                raise ShapeError("One and only one dim can be inferred")
            inf_idx = len(out)
            out.append(1)
            j += 1
        elif c == -2:
            out.extend(src[j:])
            j = len(src)
        elif c == -3:
            _need(src, j + 1, codes)
            out.append(src[j] * src[j + 1])
            j += 2
        elif c == -4:
            _need(src, j, codes)
            if i + 2 >= len(codes):
                raise ShapeError(f"Reshape: -4 needs two more codes, in shape {codes}")
            d0, d1, d2 = src[j], codes[i + 1], codes[i + 2]
            if d1 == -1 and d2 == -1:
                raise ShapeError("Split dims cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise ShapeError(f"Split dims {d1}, {d2} do not divide original dim {d0}")
            out += [d1, d2]
            i += 2
            j += 1
        elif c > 0:
            out.append(c)
            j += 1
        else:
            raise ShapeError(f"Reshape: invalid shape code {c}")
        i += 1
    total = math.prod(src)
    if inf_idx >= 0:
        rest = math.prod(out)
        if rest == 0 or total % rest:
            raise ShapeError(f"Reshape: cannot infer -1 for shape {codes} from input {_sh(src)}")
        out[inf_idx] = total // rest
    if reverse:
        out = out[::-1]
    return tuple(out)


def _need(src, j, codes):
    if j >= len(src):
        raise ShapeError(f"Reshape: shape {tuple(codes)} uses more dims than the input has ({len(src)})")


def _reshape_target(p, src):
    codes = tuple(p.shape) if p.shape else tuple(p.target_shape)
    out = reshape_shape(src, codes, p.reverse)
    if math.prod(out) != math.prod(src):
        raise ShapeError(f"Target shape size is different to source. Target: {_sh(out)}\nSource: {_sh(src)}")
    return out


def _reshape_infer(p, ins, outs):
    x = ins[0]
    if x is None:
        return ins, outs
    out = outs[0]
    if 0 in x and x.count(0) == 1 and out is not None and 0 not in out:
        # backward: one unknown input dim follows from the known output's size (MXNet's
        # ReverseReshapeInferShape)
        known = math.prod(d for d in x if d != 0)
        if known and math.prod(out) % known == 0:
            x = tuple(math.prod(out) // known if d == 0 else d for d in x)
            return [x], [_reshape_target(p, x)]
    return ins, [_reshape_target(p, x)]


def _reshape_forward(p, ins, oc):
    x = ins[0]
    return x.reshape(_reshape_target(p, tuple(x.shape)))


def _reshape_gradient(F, p, ins, outs, ograds):
    g, shape = ograds[0], tuple(ins[0].shape)
    if g.__class__.__name__ == "NDArray" and 0 not in shape:
        # eager (the autograd tape): a view of the head gradient, as NDArray.reshape (the
        # rule's result is only read), instead of the copy an imperative Reshape makes
        return [g.reshape(shape)]
    return [F.Reshape(g, shape=shape)]


register(OpDef(
    "Reshape", _reshape_forward, _reshape_infer, aliases=("reshape",),
    params=(Param("shape", "shape", (), "The target shape (MXNet codes 0, -1, -2, -3, -4 allowed)."),
            Param("reverse", "bool", False, "If true then the special values are inferred from right to left."),
            Param("target_shape", "shape", (), "(Deprecated! Use shape instead.)"),
            Param("keep_highest", "bool", False, "(Deprecated! Use shape instead.)")),
    gradient=_reshape_gradient,
    doc="Reshapes the input array (a view when possible).\n\n"
        "Special codes: 0 copies a dim, -1 infers one dim, -2 copies the remaining dims,\n"
        "-3 merges two dims, -4 splits one dim into the two codes that follow."))


def _flatten_shape(x):
    return (x[0], math.prod(x[1:])) if len(x) > 1 else (x[0], 1)


register(OpDef(
    "Flatten", lambda p, ins, oc: ins[0].reshape(_flatten_shape(tuple(ins[0].shape))),
    lambda p, ins, outs: (ins, [None if ins[0] is None or 0 in ins[0] else _flatten_shape(ins[0])]),
    aliases=("flatten",),
    gradient=lambda F, p, ins, outs, ograds: [F.Reshape(ograds[0], shape=tuple(ins[0].shape))],
    doc="Flattens the input to shape ``(N, prod(rest))``."))
