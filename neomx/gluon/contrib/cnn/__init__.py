"""``gluon.contrib.cnn``: MXNet 1.9.1's deformable convolution layers."""
from . import conv_layers
from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution

__all__ = conv_layers.__all__
