"""Deformable convolution layers (DCN v1 and v2) of MXNet 1.9.1's ``gluon.contrib.cnn``.

Each layer holds two convolutions: a plain ``Convolution`` producing the sampling offsets
(``offset_weight``/``offset_bias``, zero-initialized so training starts as a regular
convolution) and the deformable one producing the output (``deformable_conv_weight``/
``deformable_conv_bias``).
"""
from .... import symbol
from ....base import numeric_types
from ...block import HybridBlock
from ...nn import Activation

__all__ = ['DeformableConvolution', 'ModulatedDeformableConvolution']


def _pair(value, n):
    return (value,) * n if isinstance(value, numeric_types) else value


class _DeformableBase(HybridBlock):
    """Parameters shared by both layers; ``offset_per_point`` is 2 (dy, dx)
    for DCN v1 and 3 (dy, dx, mask) for DCN v2."""

    offset_per_point = 2

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups,
                 num_deformable_group, layout, use_bias, in_channels, activation,
                 weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            assert layout in ('NCHW', 'NHWC'), "Only supports 'NCHW' and 'NHWC' layout for now"
            kernel_size = _pair(kernel_size, 2)
            n = len(kernel_size)
            strides, padding, dilation = (_pair(v, n) for v in (strides, padding, dilation))
            self._op_name = op_name
            points = num_deformable_group * kernel_size[0] * kernel_size[1]
            self.offset_split_index = 2 * points
            common = {'kernel': kernel_size, 'stride': strides, 'dilate': dilation,
                      'pad': padding, 'num_group': groups, 'layout': layout}
            self._kwargs_offset = dict(common, num_filter=self.offset_per_point * points,
                                       no_bias=not offset_use_bias)
            self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                                num_deformable_group=num_deformable_group,
                                                no_bias=not use_bias)
            if adj:
                self._kwargs_offset['adj'] = adj
                self._kwargs_deformable_conv['adj'] = adj
            self._make_params(kernel_size, layout, in_channels, use_bias, offset_use_bias,
                              weight_initializer, bias_initializer,
                              offset_weight_initializer, offset_bias_initializer)
            self.act = Activation(activation, prefix=activation + '_') if activation else None

    def _offset_params(self, kernel_size, layout, in_channels, use_bias, weight_init, bias_init):
        # shapes from the offset Convolution's partial shape inference, as MXNet does
        dshape = [0] * (len(kernel_size) + 2)
        dshape[layout.find('N')] = 1
        dshape[layout.find('C')] = in_channels
        offset = symbol.Convolution(symbol.var('data', shape=dshape), **self._kwargs_offset)
        shapes = offset.infer_shape_partial()[0]
        self.offset_weight = self.params.get('offset_weight', shape=shapes[1], init=weight_init,
                                             allow_deferred_init=True)
        self.offset_bias = (self.params.get('offset_bias', shape=shapes[2], init=bias_init,
                                            allow_deferred_init=True) if use_bias else None)

    def _conv_params(self, kernel_size, use_bias, weight_init, bias_init):
        shape = [0] * (len(kernel_size) + 2)
        shape[0], shape[2], shape[3] = self._channels, kernel_size[0], kernel_size[1]
        self.deformable_conv_weight = self.params.get('deformable_conv_weight', shape=shape,
                                                      init=weight_init, allow_deferred_init=True)
        self.deformable_conv_bias = (
            self.params.get('deformable_conv_bias', shape=(self._channels,), init=bias_init,
                            allow_deferred_init=True) if use_bias else None)

    def _offset(self, F, x, offset_weight, offset_bias):
        args = (x, offset_weight) if offset_bias is None else (x, offset_weight, offset_bias)
        return F.Convolution(*args, cudnn_off=True, **self._kwargs_offset)

    def _finish(self, act):
        return self.act(act) if self.act else act

_DOC_PARAMS = """
    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size, strides, padding, dilation : int or tuple of 2 ints
        Defaults (1, 1), (1, 1), (0, 0), (1, 1).
    groups : int, default 1
    num_deformable_group : int, default 1
        Number of deformable group partitions (each has its own offsets).
    layout : {'NCHW', 'NHWC'}, default 'NCHW'
    use_bias : bool, default True
    in_channels : int, default 0
        0 defers initialization to the first forward.
    activation : str, default None
    weight_initializer, bias_initializer : default None, 'zeros'
        For the output convolution.
    offset_weight_initializer, offset_bias_initializer : default 'zeros', 'zeros'
        For the offset convolution.
    offset_use_bias : bool, default True
"""


class DeformableConvolution(_DeformableBase):
    __doc__ = """2-D deformable convolution v1 (Dai, 2017): the sampling grid is shifted by
    offsets learned by a separate convolution.
    """ + _DOC_PARAMS + """
    Examples
    --------
    >>> import neomx as mx
    >>> layer = mx.gluon.contrib.cnn.DeformableConvolution(4, kernel_size=3, in_channels=2)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 2, 5, 5))).shape
    (1, 4, 3, 3)
    """

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW', use_bias=True,
                 in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True,
                 op_name='DeformableConvolution', adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params)

    def _make_params(self, kernel_size, layout, in_channels, use_bias, offset_use_bias,
                     weight_init, bias_init, offset_weight_init, offset_bias_init):
        # MXNet creates the offset parameters first here, and last in the modulated layer
        self._offset_params(kernel_size, layout, in_channels, offset_use_bias,
                            offset_weight_init, offset_bias_init)
        self._conv_params(kernel_size, use_bias, weight_init, bias_init)

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offset(F, x, offset_weight, offset_bias)
        bias = {} if deformable_conv_bias is None else {'bias': deformable_conv_bias}
        act = F.contrib.DeformableConvolution(data=x, offset=offset, weight=deformable_conv_weight,
                                              name='fwd', **bias, **self._kwargs_deformable_conv)
        return self._finish(act)

    def _alias(self):
        return 'deformable_conv'

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        n = len(kw['kernel'])
        s = '{name}({mapping}, kernel_size={kernel}, stride={stride}'
        if kw['pad'] != (0,) * n:
            s += ', padding={pad}'
        if kw['dilate'] != (1,) * n:
            s += ', dilation={dilate}'
        if kw['num_group'] != 1:
            s += ', groups={num_group}'
        if self.deformable_conv_bias is None:
            s += ', bias=False'
        if self.act:
            s += ', {}'.format(self.act)
        s += ')'
        shape = self.deformable_conv_weight.shape
        return s.format(name=self.__class__.__name__,
                        mapping='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]),
                        **kw)


class ModulatedDeformableConvolution(_DeformableBase):
    __doc__ = """2-D modulated deformable convolution v2 (Dai, 2018,
    https://arxiv.org/abs/1811.11168): learned offsets plus a per-point modulation mask
    (``2 * sigmoid`` of the last third of the offset convolution's channels).
    """ + _DOC_PARAMS + """
    Examples
    --------
    >>> import neomx as mx
    >>> layer = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(4, kernel_size=3,
    ...                                                             in_channels=2)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 2, 5, 5))).shape
    (1, 4, 3, 3)
    """

    offset_per_point = 3
    __repr__ = HybridBlock.__repr__  # MXNet gives only DeformableConvolution its own repr

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW', use_bias=True,
                 in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True,
                 op_name='ModulatedDeformableConvolution', adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params)

    def _make_params(self, kernel_size, layout, in_channels, use_bias, offset_use_bias,
                     weight_init, bias_init, offset_weight_init, offset_bias_init):
        self._conv_params(kernel_size, use_bias, weight_init, bias_init)
        self._offset_params(kernel_size, layout, in_channels, offset_use_bias,
                            offset_weight_init, offset_bias_init)

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offset(F, x, offset_weight, offset_bias)
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)
        mask = F.sigmoid(mask) * 2
        bias = {} if deformable_conv_bias is None else {'bias': deformable_conv_bias}
        act = F.contrib.ModulatedDeformableConvolution(
            data=x, offset=offset_t, mask=mask, weight=deformable_conv_weight, name='fwd',
            **bias, **self._kwargs_deformable_conv)
        return self._finish(act)

    def _alias(self):
        return 'modulated_deformable_conv'
