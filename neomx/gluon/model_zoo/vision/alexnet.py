"""AlexNet (`One weird trick... <https://arxiv.org/abs/1404.5997>`_), as MXNet 1.9.1's model zoo
builds it."""
from __future__ import annotations

import os

from .... import base
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import _load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    r"""AlexNet from `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_: five
    convolutions with three max-pools, then two 4096-unit Dense layers with dropout.

    Parameters
    ----------
    classes : int, default 1000
        Number of classes of the output layer.
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                add = self.features.add
                add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    add(nn.Conv2D(channels, kernel_size=3, padding=1, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Flatten())
                for _ in range(2):
                    add(nn.Dense(4096, activation="relu"))
                    add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), "models"),
            **kwargs):
    r"""AlexNet from `"One weird trick..." <https://arxiv.org/abs/1404.5997>`_.

    Parameters
    ----------
    pretrained : bool, default False
        Load the model store's parameters (``<root>/alexnet-<hash>.params``).
    ctx : Context, default CPU
        The context of the pretrained parameters.
    root : str, default $MXNET_HOME/models
        Folder of the pretrained parameter files.
    """
    net = AlexNet(**kwargs)
    if pretrained:
        _load_pretrained(net, "alexnet", root, ctx)
    return net
