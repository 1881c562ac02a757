"""Contributed layers (MXNet 1.9.1's ``gluon.contrib.nn``): concurrent containers, Identity,
SparseEmbedding, SyncBatchNorm and the pixel shuffles."""
from __future__ import annotations

import warnings

from .... import context, ndarray
from ....base import MXNetError
from ...block import Block, HybridBlock
from ...nn import BatchNorm, HybridSequential, Sequential
from ...parameter import GluonAssertionError

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm",
           "PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


class Concurrent(Sequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``.

    Examples
    --------
    >>> import neomx as mx
    >>> net = mx.gluon.contrib.nn.Concurrent()
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(3, in_units=2), mx.gluon.nn.Dense(4, in_units=2))
    >>> net.initialize()
    >>> net(mx.nd.ones((5, 2))).shape
    (5, 7)
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return ndarray.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """The hybridizable :class:`Concurrent` (children must be HybridBlocks)."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (a branch of a concurrent container that passes data through)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Embedding with a row_sparse weight and a row_sparse gradient: each forward pulls the
    rows its indices use from the Trainer's KVStore (``weight.row_sparse_data(x)``), so it
    needs a Trainer (MXNet's ``contrib.nn.SparseEmbedding``)."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return ndarray.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        s = "{block_name}({input_dim} -> {output_dim}, {dtype})"
        return s.format(block_name=self.__class__.__name__, **self._kwargs)


class SyncBatchNorm(BatchNorm):
    """BatchNorm whose batch statistics are shared by the ``num_devices`` devices of one data
    parallel step (MXNet's ``contrib.SyncBatchNorm``; ``axis`` is always 1).

    On one device it is BatchNorm: without neomx's ``contrib.SyncBatchNorm`` operator it runs
    (and exports) ``BatchNorm`` with the same arguments; more devices need that operator and
    raise an MXNetError.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            num_devices = self._get_num_devices()
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": num_devices,
                        "key": self.prefix}

    def _get_num_devices(self):
        warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please mannually "
                      "set num_devices", UserWarning)
        return max(context.num_gpus(), 1)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        op = getattr(F.contrib, "SyncBatchNorm", None)
        if op is not None:
            return op(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)
        if self._kwargs["ndev"] != 1:
            raise MXNetError(f"SyncBatchNorm over {self._kwargs['ndev']} devices needs the "
                             "operator contrib.SyncBatchNorm, which neomx does not have yet; "
                             "num_devices=1 runs as BatchNorm")
        kwargs = {k: v for k, v in self._kwargs.items() if k not in ("ndev", "key")}
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", axis=1,
                           **kwargs)


def _factors(factor, n):
    """``factor`` repeated ``n`` times, or its ``n`` entries, as ints."""
    try:
        return (int(factor),) * n
    except TypeError:
        factors = tuple(int(f) for f in factor)
        if len(factors) != n:
            raise GluonAssertionError(f"wrong length {len(factors)}") from None
        return factors


class PixelShuffle1D(HybridBlock):
    """``(N, f*C, W) -> (N, C, W*f)``: channels moved into the width (sub-pixel upsampling).

    Examples
    --------
    >>> import neomx as mx
    >>> mx.gluon.contrib.nn.PixelShuffle1D(2)(mx.nd.zeros((1, 4, 3))).shape
    (1, 2, 6)
    """

    def __init__(self, factor):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))      # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))         # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))          # (N, C, W*f)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """``(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)``."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))   # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))     # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))         # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))            # (N, C, H*f1, W*f2)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """``(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)``."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))   # (N, C, f1*f2*f3, D, H, W)
        x = F.swapaxes(x, 2, 3)                                # (N, C, D, f1*f2*f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))     # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                  # (N, C, D*f1, f2*f3, H, W)
        x = F.swapaxes(x, 3, 4)                                # (N, C, D*f1, H, f2*f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))          # (N, C, D*f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                  # (N, C, D*f1, H*f2, f3, W)
        x = F.swapaxes(x, 4, 5)                                # (N, C, D*f1, H*f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))                  # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factors})"
