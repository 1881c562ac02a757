"""``neomx.contrib``: optional extras that are not part of MXNet's API.

* :mod:`neomx.contrib.torch_data` -- a RecordIO file (``.rec`` + ``.idx``) as a
  ``torch.utils.data.Dataset`` of torch tensors, for plain PyTorch training loops.
"""
from . import amp  # noqa: E402,F401  (mx.contrib.amp: automatic mixed precision)

# MXNet 1.9.1's mx.contrib: autograd (the first autograd API), io (DataLoaderIter), text
# (vocabulary, token embeddings), tensorboard (LogMetricsCallback), ndarray/nd and symbol/sym
# (the contrib operators); svrg_optimization is imported on its own, as in MXNet.
from . import symbol  # noqa: E402
from . import ndarray  # noqa: E402
from . import symbol as sym  # noqa: E402
from . import ndarray as nd  # noqa: E402
from . import autograd  # noqa: E402
from . import tensorboard  # noqa: E402
from . import text  # noqa: E402
from . import onnx  # noqa: E402
from . import io  # noqa: E402
from . import quantization  # noqa: E402  (INT8: quantize_model, quantize_net, calib_graph, ...)
from . import quantization as quant  # noqa: E402
