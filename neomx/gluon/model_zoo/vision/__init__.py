r"""Predefined vision models of MXNet 1.9.1's model zoo: AlexNet, DenseNet, Inception V3, ResNet
V1/V2, SqueezeNet, VGG, MobileNet and MobileNetV2, with MXNet's architectures and therefore
MXNet's parameter names, so parameter files of MXNet's model store load into them.

Build a model with random weights by its constructor or by name::

    from neomx.gluon.model_zoo import vision
    resnet18 = vision.resnet18_v1()
    net = vision.get_model('mobilenet0.25', classes=10)

``pretrained=True`` loads ``$MXNET_HOME/models/<name>-<short hash>.params`` (see
:mod:`neomx.gluon.model_zoo.model_store`; neomx does not download it). The pretrained models
expect RGB images in [0, 1] normalized with mean ``[0.485, 0.456, 0.406]`` and std
``[0.229, 0.224, 0.225]``, of at least 224x224 (299x299 for Inception V3).
"""
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403

_MODELS = {
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1, "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1, "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2, "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn, "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121, "densenet161": densenet161, "densenet169": densenet169,
    "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75, "mobilenet0.5": mobilenet0_5,
    "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """A predefined model by name (case-insensitive).

    Parameters
    ----------
    name : str
        Name of the model: ``'resnet50_v1'``, ``'mobilenetv2_0.25'``, ``'inceptionv3'``, ...
    pretrained : bool
        Whether to load the pretrained weights for model.
    classes : int
        Number of classes for the output layer.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Location for keeping the model parameters.

    Returns
    -------
    HybridBlock
        The model.

    Examples
    --------
    >>> import neomx as mx
    >>> net = mx.gluon.model_zoo.vision.get_model('mobilenet0.25', classes=10)
    >>> net.initialize()
    >>> net(mx.nd.zeros((2, 3, 64, 64))).shape
    (2, 10)
    """
    name = name.lower()
    if name not in _MODELS:
        options = "\n\t".join(sorted(_MODELS))
        raise ValueError(f"Model {name} is not supported. Available options are\n\t{options}")
    return _MODELS[name](**kwargs)
