"""SqueezeNet 1.0 (`SqueezeNet <https://arxiv.org/abs/1602.07360>`_) and 1.1 (`the official
repository's <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_), as MXNet
1.9.1's model zoo builds them."""
from __future__ import annotations

import os

from .... import base
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ..model_store import _load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]


def _make_fire_conv(channels, kernel_size, padding=0):
    """Convolution + ReLU."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


# Per version: the stem convolution (channels, kernel) and then the feature stages, "pool" or
# a fire module's (squeeze, expand 1x1, expand 3x3) channels.
_FIRE = {16: (16, 64, 64), 32: (32, 128, 128), 48: (48, 192, 192), 64: (64, 256, 256)}
_SPEC = {"1.0": ((96, 7), [16, 16, 32, "pool", 32, 48, 48, 64, "pool", 64]),
         "1.1": ((64, 3), [16, 16, "pool", 32, 32, "pool", 48, 48, 64, 64])}


class SqueezeNet(HybridBlock):
    r"""SqueezeNet from `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and
    <0.5MB model size" <https://arxiv.org/abs/1602.07360>`_; version 1.1 (`the official
    repository's <https://github.com/DeepScale/SqueezeNet/tree/master/SqueezeNet_v1.1>`_) needs
    2.4x less computation for the same accuracy.

    Parameters
    ----------
    version : str
        '1.0' or '1.1'.
    classes : int, default 1000
        Number of classes (the channels of the last 1x1 convolution).
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in ["1.0", "1.1"], (f"Unsupported SqueezeNet version {version}:"
                                           "1.0 or 1.1 expected")
        (stem_channels, stem_kernel), stages = _SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2))
            self.features.add(nn.Activation("relu"))
            self.features.add(_pool())
            for stage in stages:
                self.features.add(_pool() if stage == "pool" else _make_fire(*_FIRE[stage]))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation("relu"))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(),
                   root=os.path.join(base.data_dir(), "models"), **kwargs):
    r"""SqueezeNet ``version`` ('1.0' or '1.1').

    Parameters
    ----------
    version : str
        '1.0' or '1.1'.
    pretrained : bool, default False
        Load the model store's parameters (``<root>/squeezenet<version>-<hash>.params``).
    ctx : Context, default CPU
        The context of the pretrained parameters.
    root : str, default $MXNET_HOME/models
        Folder of the pretrained parameter files.
    """
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        _load_pretrained(net, f"squeezenet{version}", root, ctx)
    return net


def squeezenet1_0(**kwargs):
    r"""SqueezeNet 1.0 (see :func:`get_squeezenet` for the keywords)."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    r"""SqueezeNet 1.1 (see :func:`get_squeezenet` for the keywords)."""
    return get_squeezenet("1.1", **kwargs)
