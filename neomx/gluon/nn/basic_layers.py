"""Basic layers (MXNet 1.9.1's ``gluon.nn.basic_layers``): containers, Dense, Dropout, the
normalizations, Embedding, Flatten and the lambda wrappers.

Each layer makes MXNet's operator call with MXNet's arguments (``name='fwd'`` where MXNet names
the node), so a hybridized layer exports the same graph as MXNet's.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import ndarray, symbol
from ...base import MXNetError
from ..block import Block, HybridBlock
from ..parameter import GluonAssertionError
from ..utils import _indent
from .activations import Activation

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
           "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda",
           "HybridLambda"]


class _Stack:
    """What Sequential and HybridSequential share: add, indexing, len, repr."""

    def add(self, *blocks):
        """Append blocks, in order."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self._children.items())
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class Sequential(_Stack, Block):
    """Blocks run one after the other.

    Examples
    --------
    >>> import neomx as mx
    >>> net = mx.gluon.nn.Sequential()
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(10, activation='relu'))
    ...     net.add(mx.gluon.nn.Dense(20))
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Stack, HybridBlock):
    """HybridBlocks run one after the other (hybridizable as one graph)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    ``in_units`` 0 leaves the input size to the first forward (deferred initialization);
    ``flatten`` collapses all but the first axis of the input (else the last axis is the one
    contracted).
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        return (f"{self.__class__.__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
                f"{self.act if self.act else 'linear'})")


def _kwargs_repr(kwargs):
    """``k=repr(v), ...`` in insertion order (how MXNet's layers print their settings)."""
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


class Dropout(HybridBlock):
    """Zeroes a fraction ``rate`` of the input in training (scaling the rest by
    ``1 / (1 - rate)``); the identity in prediction. ``axes`` share one mask along them
    (variational dropout)."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class _BatchNorm(HybridBlock):
    """BatchNorm and BatchNormReLU: parameters gamma, beta and the running statistics
    ``running_mean``/``running_var`` (never differentiated; updated in training)."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, fuse_relu=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        shape = (in_channels,)
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=shape, init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=shape, init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get("running_mean", grad_req="null", shape=shape,
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null", shape=shape,
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        if np.dtype(dtype).name == "float16":  # statistics stay float32, as MXNet
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        if self.fuse_relu:
            fused = getattr(F.contrib, "BatchNormWithReLU", None)
            if fused is None:
                raise MXNetError("BatchNormReLU needs the operator BatchNormWithReLU "
                                 "(contrib), which neomx does not have yet (MXNet 1.9.1 runs "
                                 "it only with its MKL-DNN backend); use BatchNorm followed by "
                                 "Activation('relu')")
            return fused(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                           **self._kwargs)

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        return (f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={in_channels if in_channels else None})")


class BatchNorm(_BatchNorm):
    """Batch normalization over every axis but ``axis``: batch statistics in training (and
    ``running_mean``/``running_var`` updated with ``momentum``), the running ones in prediction
    or with ``use_global_stats``. ``scale=False`` fixes gamma at 1.

    Examples
    --------
    >>> import neomx as mx
    >>> bn = mx.gluon.nn.BatchNorm(in_channels=3)
    >>> bn.running_var.shape
    (3,)
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=False,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class BatchNormReLU(_BatchNorm):
    """BatchNorm fused with a ReLU (``contrib.BatchNormWithReLU``; MXNet 1.9.1 runs it only with
    MKL-DNN, neomx not yet: its forward raises an MXNetError)."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=True,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class Embedding(HybridBlock):
    """Rows of a ``(input_dim, output_dim)`` weight picked by integer indices.

    With ``sparse_grad=True`` the weight's gradient is row_sparse (the rows the batch used).
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = "row_sparse" if sparse_grad else "default"
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{self.__class__.__name__}({k['input_dim']} -> {k['output_dim']}, "
                f"{k['dtype']})")


class Flatten(HybridBlock):
    """Collapses every axis but the first: ``(N, ...) -> (N, prod(...))``."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return self.__class__.__name__


class InstanceNorm(HybridBlock):
    """Normalization of each sample and channel over the remaining axes, then ``gamma`` (only
    trained with ``scale=True``) and ``beta``."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)

    def __repr__(self):
        return (f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={self.gamma.shape[0]})")


class LayerNorm(HybridBlock):
    """Normalization of each sample over ``axis`` (the last by default), then ``gamma`` and
    ``beta`` of that axis' size."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", in_channels=0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        return (f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={self.gamma.shape[0]})")


class GroupNorm(HybridBlock):
    """Normalization over groups of channels (``num_groups`` of axis 1) and the remaining
    axes, then one ``gamma``/``beta`` per group."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(num_groups,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(num_groups,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return f"{self.__class__.__name__}({_kwargs_repr(self._kwargs)})"


class Lambda(Block):
    """A Block around a function of NDArrays, or the name of an ``mx.nd`` function.

    Examples
    --------
    >>> import neomx as mx
    >>> mx.gluon.nn.Lambda('tanh')
    Lambda(tanh)
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(ndarray, function):
                raise GluonAssertionError(f"Function name {function} is not found in ndarray.")
            self._func_impl = getattr(ndarray, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """A HybridBlock around ``function(F, x, *args)``, or the name of a function that both
    ``mx.nd`` and ``mx.sym`` have."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not (hasattr(ndarray, function) and hasattr(symbol, function)):
                raise GluonAssertionError(
                    f"Function name {function} is not found in symbol/ndarray.")
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._func_name})"
