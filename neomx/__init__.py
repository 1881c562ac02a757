"""neomx: Apache MXNet 1.x's mixed programming model (NDArray, Symbol, Executor) on PyTorch.

``import neomx as mx`` and MXNet 1.x code runs unchanged.
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import storage
storage.configure()  # changes nothing unless NEOMX_CPU_MEM_POOL=1 opts in (see storage.py)
from . import base
from .base import MXNetError
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import engine
from . import ops
from . import autograd
from . import ndarray
from . import ndarray as nd
from . import symbol
from . import symbol as sym
from . import name
from . import attribute
from .attribute import AttrScope
from . import random
from . import executor
from .executor import Executor
from . import initializer
from . import initializer as init
from . import io
from . import recordio
from . import image
from . import image as img
from . import test_utils
from . import visualization
from . import visualization as viz
from . import lr_scheduler
from . import optimizer
from . import metric
from . import model
from . import callback
from . import kvstore
from . import kvstore as kv
from . import module
from . import module as mod
from . import runtime
from . import gluon
from . import rnn  # noqa: E402  (mx.rnn: symbolic recurrent cells, BucketSentenceIter)
initializer.FusedRNN = rnn.rnn_cell.FusedRNN  # (mx.init.FusedRNN; it packs with mx.rnn's cells)
from . import operator  # noqa: E402  (mx.operator: CustomOp, CustomOpProp, register)
from . import monitor  # noqa: E402
from . import monitor as mon  # noqa: E402  (mx.mon.Monitor)
from . import profiler  # noqa: E402
ndarray.CachedOp = executor.cached_op.CachedOp  # (mx.nd.CachedOp; the executor builds on ndarray)
from . import util
from .util import (set_np_shape, is_np_shape, np_shape, use_np_shape, is_np_array,  # noqa: E402
                   use_np, np_array, use_np_array)
from . import error, log, registry  # noqa: E402  (MXNet's small modules; mx.misc is imported on its own)
from . import random as rnd  # noqa: E402
from .ndarray import utils as _nd_utils  # noqa: E402,F401  (mx.nd.utils)
from . import onnx  # noqa: E402  (mx.onnx.export_model; needs the onnx package when called)
from .export import to_torch  # noqa: E402  (neomx.to_torch: a model as a torch.fx.GraphModule)
from . import contrib  # noqa: E402  (mx.contrib.amp)

__all__ = ["MXNetError", "Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "nd", "ndarray", "sym", "symbol", "name", "attribute", "AttrScope", "random", "autograd",
           "engine", "executor", "Executor", "base"]
