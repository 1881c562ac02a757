"""DenseNet-BC (`Densely Connected Convolutional Networks <https://arxiv.org/abs/1608.06993>`_),
as MXNet 1.9.1's model zoo builds it."""
from __future__ import annotations

import os

from .... import base
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import _load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]


def _bn_relu_conv(seq, channels, **conv_kwargs):
    seq.add(nn.BatchNorm())
    seq.add(nn.Activation("relu"))
    seq.add(nn.Conv2D(channels, use_bias=False, **conv_kwargs))


def _make_dense_layer(growth_rate, bn_size, dropout):
    """One dense layer: the input concatenated with ``growth_rate`` new channels (a 1x1
    bottleneck of ``bn_size * growth_rate`` channels, then a 3x3 convolution)."""
    new_features = nn.HybridSequential(prefix="")
    _bn_relu_conv(new_features, bn_size * growth_rate, kernel_size=1)
    _bn_relu_conv(new_features, growth_rate, kernel_size=3, padding=1)
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity())
    out.add(new_features)
    return out


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    """Dense block ``stage_index`` (prefix ``stage<i>_``) of ``num_layers`` dense layers."""
    out = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features):
    """BN-ReLU-1x1 convolution to ``num_output_features`` channels, then 2x2 average pool."""
    out = nn.HybridSequential(prefix="")
    _bn_relu_conv(out, num_output_features, kernel_size=1)
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    r"""DenseNet-BC from `"Densely Connected Convolutional Networks"
    <https://arxiv.org/pdf/1608.06993.pdf>`_.

    Parameters
    ----------
    num_init_features : int
        Channels of the first convolution.
    growth_rate : int
        Channels each dense layer adds (``k`` in the paper).
    block_config : list of int
        Number of dense layers in each block.
    bn_size : int, default 4
        Bottleneck width factor (``bn_size * k`` channels).
    dropout : float, default 0
        Dropout rate after each dense layer.
    classes : int, default 1000
        Number of classes of the output layer.
    """

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                        use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout,
                                                    i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_make_transition(num_features))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (num_init_features, growth_rate, block_config)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=cpu(),
                 root=os.path.join(base.data_dir(), "models"), **kwargs):
    r"""DenseNet-BC with ``num_layers`` layers (121, 161, 169 or 201).

    Parameters
    ----------
    num_layers : int
        121, 161, 169 or 201.
    pretrained : bool, default False
        Load the model store's parameters (``<root>/densenet<n>-<hash>.params``).
    ctx : Context, default CPU
        The context of the pretrained parameters.
    root : str, default $MXNET_HOME/models
        Folder of the pretrained parameter files.
    **kwargs
        Passed to :class:`DenseNet` (``bn_size``, ``dropout``, ``classes``, ``prefix``).
    """
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        _load_pretrained(net, f"densenet{num_layers}", root, ctx)
    return net


def _constructor(num_layers):
    def make(**kwargs):
        return get_densenet(num_layers, **kwargs)
    make.__name__ = make.__qualname__ = f"densenet{num_layers}"
    make.__doc__ = f"""DenseNet-BC {num_layers}-layer model from `"Densely Connected
    Convolutional Networks" <https://arxiv.org/pdf/1608.06993.pdf>`_ (see :func:`get_densenet`
    for the keywords)."""
    return make


densenet121 = _constructor(121)
densenet161 = _constructor(161)
densenet169 = _constructor(169)
densenet201 = _constructor(201)
