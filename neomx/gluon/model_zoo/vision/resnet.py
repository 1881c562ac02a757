"""ResNet V1 (`Deep Residual Learning for Image Recognition <http://arxiv.org/abs/1512.03385>`_)
and V2 (`Identity Mappings in Deep Residual Networks <https://arxiv.org/abs/1603.05027>`_), as
MXNet 1.9.1's model zoo builds them (same blocks, scopes and therefore parameter names)."""
from __future__ import annotations

import os

from .... import base
from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import _load_pretrained

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    """A 3x3 convolution without bias, padded to keep the size (at stride 1)."""
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _projection_v1(channels, stride, in_channels):
    """V1's shortcut projection: 1x1 convolution + BatchNorm."""
    down = nn.HybridSequential(prefix="")
    down.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                       in_channels=in_channels))
    down.add(nn.BatchNorm())
    return down


class BasicBlockV1(HybridBlock):
    r"""ResNet V1's basic block (ResNet-18 and -34): two 3x3 convolutions with BatchNorm, added to
    the (projected) input, then ReLU.

    Parameters
    ----------
    channels : int
        Number of output channels.
    stride : int
        Stride of the first convolution (and of the projection).
    downsample : bool, default False
        Whether the shortcut is a 1x1 projection.
    in_channels : int, default 0
        Number of input channels (0: inferred at the first forward).
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        out = self.body(x)  # before the projection: MXNet's node order
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + out, act_type="relu")


class BottleneckV1(HybridBlock):
    r"""ResNet V1's bottleneck block (ResNet-50 and deeper): 1x1, 3x3 and 1x1 convolutions with
    BatchNorm (the first strided), added to the (projected) input, then ReLU.

    Parameters
    ----------
    channels : int
        Number of output channels (the inner convolutions have a quarter).
    stride : int
        Stride of the first convolution (and of the projection).
    downsample : bool, default False
        Whether the shortcut is a 1x1 projection.
    in_channels : int, default 0
        Number of input channels (0: inferred at the first forward).
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        inner = channels // 4
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(inner, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(inner, 1, inner))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        out = self.body(x)
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(out + residual, act_type="relu")


class BasicBlockV2(HybridBlock):
    r"""ResNet V2's basic block (pre-activation, ResNet-18 and -34): BatchNorm-ReLU-conv3x3 twice,
    added to the input (or to a 1x1 projection of the first activation).

    Parameters
    ----------
    channels : int
        Number of output channels.
    stride : int
        Stride of the first convolution (and of the projection).
    downsample : bool, default False
        Whether the shortcut is a 1x1 projection.
    in_channels : int, default 0
        Number of input channels (0: inferred at the first forward).
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        x = self.conv2(x)
        return x + residual


class BottleneckV2(HybridBlock):
    r"""ResNet V2's bottleneck block (pre-activation, ResNet-50 and deeper): BatchNorm-ReLU
    before each of the 1x1, 3x3 (strided) and 1x1 convolutions, added to the input (or to a 1x1
    projection of the first activation).

    Parameters
    ----------
    channels : int
        Number of output channels (the inner convolutions have a quarter).
    stride : int
        Stride of the 3x3 convolution (and of the projection).
    downsample : bool, default False
        Whether the shortcut is a 1x1 projection.
    in_channels : int, default 0
        Number of input channels (0: inferred at the first forward).
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        inner = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(inner, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(inner, stride, inner)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        x = self.conv2(x)
        x = F.Activation(self.bn3(x), act_type="relu")
        x = self.conv3(x)
        return x + residual


def _make_stage(block, num_blocks, channels, stride, stage_index, in_channels):
    """Stage ``stage_index`` (prefix ``stage<i>_``): ``num_blocks`` blocks, the first strided
    and projecting when the channel count changes."""
    stage = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=""))
        for _ in range(num_blocks - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


class _ResNet(HybridBlock):
    """What both versions share: ``features`` then the ``output`` Dense layer."""

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        return _make_stage(block, layers, channels, stride, stage_index, in_channels)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _add_stem(features, channels, thumbnail):
    """The first convolution: 3x3 for small (thumbnail) images, else 7x7/2 + BN + ReLU +
    max-pool 3x3/2."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
        return
    features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
    features.add(nn.BatchNorm())
    features.add(nn.Activation("relu"))
    features.add(nn.MaxPool2D(3, 2, 1))


class ResNetV1(_ResNet):
    r"""ResNet V1 from `"Deep Residual Learning for Image Recognition"
    <http://arxiv.org/abs/1512.03385>`_.

    Parameters
    ----------
    block : type
        The residual block class: :class:`BasicBlockV1` or :class:`BottleneckV1`.
    layers : list of int
        Number of blocks in each stage.
    channels : list of int
        Channels of the stem and then of each stage (one longer than ``layers``).
    classes : int, default 1000
        Number of classes of the output layer.
    thumbnail : bool, default False
        A 3x3 stride-1 stem for small images (CIFAR) instead of 7x7/2 and a max-pool.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            _add_stem(self.features, channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1],
                                                   1 if i == 0 else 2, i + 1,
                                                   in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    r"""ResNet V2 from `"Identity Mappings in Deep Residual Networks"
    <https://arxiv.org/abs/1603.05027>`_: pre-activation blocks, the input normalized by a
    BatchNorm without scale and shift.

    Parameters
    ----------
    block : type
        The residual block class: :class:`BasicBlockV2` or :class:`BottleneckV2`.
    layers : list of int
        Number of blocks in each stage.
    channels : list of int
        Channels of the stem and then of each stage (one longer than ``layers``).
    classes : int, default 1000
        Number of classes of the output layer.
    thumbnail : bool, default False
        A 3x3 stride-1 stem for small images (CIFAR) instead of 7x7/2 and a max-pool.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _add_stem(self.features, channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1],
                                                   1 if i == 0 else 2, i + 1,
                                                   in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


# depth -> (block kind, blocks per stage, channels of the stem and the stages)
resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(),
               root=os.path.join(base.data_dir(), "models"), **kwargs):
    r"""ResNet V1 or V2 with ``num_layers`` layers.

    Parameters
    ----------
    version : int
        1 or 2.
    num_layers : int
        18, 34, 50, 101 or 152.
    pretrained : bool, default False
        Load the model store's parameters (``<root>/resnet<n>_v<version>-<hash>.params``).
    ctx : Context, default CPU
        The context of the pretrained parameters.
    root : str, default $MXNET_HOME/models
        Folder of the pretrained parameter files.
    **kwargs
        Passed to :class:`ResNetV1` / :class:`ResNetV2` (``classes``, ``thumbnail``, ``prefix``).

    Examples
    --------
    >>> import neomx as mx
    >>> net = mx.gluon.model_zoo.vision.get_resnet(1, 18, classes=10)
    >>> net.initialize()
    >>> net(mx.nd.zeros((1, 3, 32, 32))).shape
    (1, 10)
    """
    assert num_layers in resnet_spec, \
        f"Invalid number of layers: {num_layers}. Options are {resnet_spec.keys()}"
    block_type, layers, channels = resnet_spec[num_layers]
    assert 1 <= version <= 2, f"Invalid resnet version: {version}. Options are 1 and 2."
    block_class = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block_class, layers, channels, **kwargs)
    if pretrained:
        _load_pretrained(net, f"resnet{num_layers}_v{version}", root, ctx)
    return net


def _constructor(version, num_layers):
    def make(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    make.__name__ = make.__qualname__ = f"resnet{num_layers}_v{version}"
    paper = ("`\"Deep Residual Learning for Image Recognition\" "
             "<http://arxiv.org/abs/1512.03385>`_" if version == 1 else
             "`\"Identity Mappings in Deep Residual Networks\" "
             "<https://arxiv.org/abs/1603.05027>`_")
    make.__doc__ = f"""ResNet-{num_layers} V{version} from {paper}.

    Parameters
    ----------
    pretrained : bool, default False
        Whether to load the pretrained weights for model.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Location for keeping the model parameters.
    """
    return make


resnet18_v1 = _constructor(1, 18)
resnet34_v1 = _constructor(1, 34)
resnet50_v1 = _constructor(1, 50)
resnet101_v1 = _constructor(1, 101)
resnet152_v1 = _constructor(1, 152)
resnet18_v2 = _constructor(2, 18)
resnet34_v2 = _constructor(2, 34)
resnet50_v2 = _constructor(2, 50)
resnet101_v2 = _constructor(2, 101)
resnet152_v2 = _constructor(2, 152)
