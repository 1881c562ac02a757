"""``neomx.contrib``: optional extras that are not part of MXNet's API.

* :mod:`neomx.contrib.torch_data` -- a RecordIO file (``.rec`` + ``.idx``) as a
  ``torch.utils.data.Dataset`` of torch tensors, for plain PyTorch training loops.
"""
from . import amp  # noqa: E402,F401  (mx.contrib.amp: automatic mixed precision)
