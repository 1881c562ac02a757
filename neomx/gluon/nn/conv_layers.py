"""Convolution, transposed convolution, pooling and padding layers (MXNet 1.9.1's
``gluon.nn.conv_layers``).

A convolution's weight shape comes from the operator's own shape inference on a data shape with
the unknown input channels left 0, so ``Conv2D(8, 3)`` has a ``(8, 0, 3, 3)`` weight until the
first forward fills the 0 in (deferred initialization), exactly as MXNet.
"""
from __future__ import annotations

from ... import symbol
from ...base import numeric_types
from ..block import HybridBlock
from ..parameter import GluonAssertionError
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]


_LAYOUTS = {1: ("NCW",), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _check(cond, msg):
    if not cond:
        raise GluonAssertionError(msg)


def _tuple(value, n):
    """A number repeated ``n`` times; anything else unchanged."""
    return (value,) * n if isinstance(value, numeric_types) else value


def _infer_weight_shape(op_name, data_shape, kwargs):
    """The (partly known) shapes of the operator's arguments for ``data_shape``."""
    data = symbol.var("data", shape=data_shape)
    return getattr(symbol, op_name)(data, **kwargs).infer_shape_partial()[0]


class _Conv(HybridBlock):
    """What the convolutions and transposed convolutions share: ``weight`` (and ``bias``),
    MXNet's operator arguments in ``_kwargs``, an optional activation."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            self._op_name = op_name
            self._kwargs = {
                "kernel": kernel_size, "stride": _tuple(strides, n),
                "dilate": _tuple(dilation, n), "pad": _tuple(padding, n),
                "num_filter": channels, "num_group": groups, "no_bias": not use_bias,
                "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            dshape = [0] * (n + 2)
            dshape[layout.find("N")] = 1
            dshape[layout.find("C")] = in_channels
            wshapes = _infer_weight_shape(op_name, dshape, self._kwargs)
            self.weight = self.params.get("weight", shape=wshapes[1], init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=wshapes[2], init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name="fwd", **self._kwargs)
        else:
            out = op(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self):
        return "conv"

    def __repr__(self):
        kw = self._kwargs
        n = len(kw["kernel"])
        s = f"{self.__class__.__name__}({{mapping}}, kernel_size={kw['kernel']}, " \
            f"stride={kw['stride']}"
        if kw["pad"] != (0,) * n:
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1,) * n:
            s += f", dilation={kw['dilate']}"
        # MXNet 1.9.1 looks for ``out_pad`` but the transposed layers store ``outpad``, so
        # output_padding never shows; kept for identical output.
        if hasattr(self, "out_pad") and self.out_pad != (0,) * n:
            s += f", output_padding={self.out_pad}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        shape = self.weight.shape
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}") + ")"


def _conv_args(n, layout, kernel_size, output_padding=None):
    """Check an ``n``-D convolution's layout and tuple lengths as MXNet does; the tuples."""
    allowed = _LAYOUTS[n]
    _check(layout in allowed,
           f"Only supports {' and '.join(repr(a) for a in allowed)} layout for now")
    kernel_size = _tuple(kernel_size, n)
    if output_padding is not None:
        output_padding = _tuple(output_padding, n)
    _check(len(kernel_size) == n, f"kernel_size must be a number or a list of {n} ints")
    if output_padding is not None:
        _check(len(output_padding) == n, f"output_padding must be a number or a list of {n} ints")
    return kernel_size, output_padding


class Conv1D(_Conv):
    """1-D convolution over ``(N, C, W)`` data (layout ``NCW``)."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout="NCW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size, _ = _conv_args(1, layout, kernel_size)
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer,
                         op_name, **kwargs)


class Conv2D(_Conv):
    """2-D convolution (layouts ``NCHW``, ``NHWC``).

    Examples
    --------
    >>> import neomx as mx
    >>> conv = mx.gluon.nn.Conv2D(8, 3, in_channels=4)
    >>> conv.weight.shape
    (8, 4, 3, 3)
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, layout="NCHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size, _ = _conv_args(2, layout, kernel_size)
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer,
                         op_name, **kwargs)


class Conv3D(_Conv):
    """3-D convolution (layouts ``NCDHW``, ``NDHWC``)."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size, _ = _conv_args(3, layout, kernel_size)
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer,
                         op_name, **kwargs)


class Conv1DTranspose(_Conv):
    """1-D transposed convolution (``Deconvolution``; ``output_padding`` is its ``adj``)."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size, output_padding = _conv_args(1, layout, kernel_size, output_padding)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer,
                         op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv2DTranspose(_Conv):
    """2-D transposed convolution (``Deconvolution``; layouts ``NCHW``, ``NHWC``)."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size, output_padding = _conv_args(2, layout, kernel_size, output_padding)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer,
                         op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv3DTranspose(_Conv):
    """3-D transposed convolution (``Deconvolution``; layouts ``NCDHW``, ``NDHWC``)."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size, output_padding = _conv_args(3, layout, kernel_size, output_padding)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer, bias_initializer,
                         op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


# --- pooling -------------------------------------------------------------------------------------
class _Pooling(HybridBlock):
    """What the pooling layers share: MXNet's ``Pooling`` arguments in ``_kwargs``."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {
            "kernel": pool_size, "stride": _tuple(strides, n), "pad": _tuple(padding, n),
            "global_pool": global_pool, "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return (f"{self.__class__.__name__}(size={kw['kernel']}, stride={kw['stride']}, "
                f"padding={kw['pad']}, ceil_mode={kw['pooling_convention'] == 'full'}, "
                f"global_pool={kw['global_pool']}, pool_type={kw['pool_type']}, "
                f"layout={kw['layout']})")


def _check_pool_layout(n, layout):
    allowed = _LAYOUTS[n] + (("NWC",) if n == 1 else ())
    _check(layout in allowed, f"Only {' and '.join(allowed)} layouts are valid for {n}D Pooling")


def _pool_size(n, layout, pool_size):
    """Check the layout and pool size of an ``n``-D pooling layer as MXNet does."""
    _check_pool_layout(n, layout)
    pool_size = _tuple(pool_size, n)
    _check(len(pool_size) == n, f"pool_size must be a number or a list of {n} ints")
    return pool_size


class MaxPool1D(_Pooling):
    """Max pooling over ``(N, C, W)`` (or ``NWC``) data; ``strides`` default to the size."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 **kwargs):
        pool_size = _pool_size(1, layout, pool_size)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class MaxPool2D(_Pooling):
    """2-D max pooling (``NCHW`` or ``NHWC``)."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, **kwargs):
        pool_size = _pool_size(2, layout, pool_size)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class MaxPool3D(_Pooling):
    """3-D max pooling (``NCDHW`` or ``NDHWC``)."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", **kwargs):
        pool_size = _pool_size(3, layout, pool_size)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout, **kwargs)


class AvgPool1D(_Pooling):
    """1-D average pooling (padding counted in the average unless ``count_include_pad`` is
    False)."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 count_include_pad=True, **kwargs):
        pool_size = _pool_size(1, layout, pool_size)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """2-D average pooling."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCHW", count_include_pad=True, **kwargs):
        pool_size = _pool_size(2, layout, pool_size)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """3-D average pooling."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", count_include_pad=True, **kwargs):
        pool_size = _pool_size(3, layout, pool_size)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    """Pooling over all the spatial axes at once (output spatial size 1)."""

    _dims = 0
    _pool_type = ""

    def __init__(self, layout, **kwargs):
        _check_pool_layout(self._dims, layout)
        super().__init__((1,) * self._dims, None, 0, True, True, self._pool_type, layout, **kwargs)


class GlobalMaxPool1D(_GlobalPooling):
    """Max over the whole W axis."""

    _dims, _pool_type = 1, "max"

    def __init__(self, layout="NCW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool2D(_GlobalPooling):
    """Max over H and W."""

    _dims, _pool_type = 2, "max"

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool3D(_GlobalPooling):
    """Max over D, H and W."""

    _dims, _pool_type = 3, "max"

    def __init__(self, layout="NCDHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool1D(_GlobalPooling):
    """Mean over the whole W axis."""

    _dims, _pool_type = 1, "avg"

    def __init__(self, layout="NCW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool2D(_GlobalPooling):
    """Mean over H and W."""

    _dims, _pool_type = 2, "avg"

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool3D(_GlobalPooling):
    """Mean over D, H and W."""

    _dims, _pool_type = 3, "avg"

    def __init__(self, layout="NCDHW", **kwargs):
        super().__init__(layout, **kwargs)


class ReflectionPad2D(HybridBlock):
    """Pads H and W of ``NCHW`` data by reflection: ``padding`` on every side, or MXNet's
    8-tuple ``pad_width``."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        _check(len(padding) == 8, "")
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)
