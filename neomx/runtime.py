"""``mx.runtime``: which features this neomx can use, under MXNet 1.9.1's feature names.

MXNet reports what its native library was compiled with; neomx reports what it can really use
in this process: CUDA, cuDNN and NCCL when PyTorch has them and a GPU is visible, the BLAS and
LAPACK PyTorch was built with, the CPU's instruction sets, OpenCV when ``cv2`` imports, the
distributed KVStore when ``torch.distributed`` is available. Features neomx has no counterpart
for (MKL-DNN subgraphs, TensorRT, TVM operators, Caffe plugins) are off.

>>> import neomx as mx
>>> features = mx.runtime.Features()
>>> features.is_enabled('TVM_OP')
False
"""
from __future__ import annotations

import collections
import functools
import importlib.util

__all__ = ["Feature", "Features", "feature_list"]

# MXNet 1.9.1's feature names, in its order
_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
          "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
          "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


class Feature:
    """A feature: ``name`` and ``enabled``; shown as ``✔ NAME`` or ``✖ NAME`` as in MXNet."""

    __slots__ = ("name", "enabled")

    def __init__(self, name: str, enabled: bool):
        self.name, self.enabled = name, bool(enabled)

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _detect() -> dict:
    import torch
    cuda = torch.cuda.is_available()
    dist = torch.distributed.is_available()
    config = torch.__config__.show().lower()
    flags = _cpu_flags()
    cap = ""
    try:
        cap = torch.backends.cpu.get_cpu_capability().lower()
    except (AttributeError, RuntimeError):
        pass
    blas_mkl = torch.backends.mkl.is_available()
    return {
        "CUDA": cuda,
        "CUDNN": cuda and torch.backends.cudnn.is_available(),
        "NCCL": cuda and dist and torch.distributed.is_nccl_available(),
        "CPU_SSE": "sse" in flags, "CPU_SSE2": "sse2" in flags, "CPU_SSE3": "pni" in flags,
        "CPU_SSE4_1": "sse4_1" in flags, "CPU_SSE4_2": "sse4_2" in flags,
        "CPU_SSE4A": "sse4a" in flags, "CPU_AVX": "avx" in flags,
        "CPU_AVX2": "avx2" in flags or cap.startswith("avx2") or cap.startswith("avx512"),
        "OPENMP": torch.backends.openmp.is_available(),
        "SSE": "sse2" in flags,
        "F16C": "f16c" in flags,
        "BLAS_MKL": blas_mkl,
        "BLAS_OPEN": not blas_mkl and "openblas" in config,
        "BLAS_APPLE": not blas_mkl and "accelerate" in config,
        "LAPACK": bool(getattr(torch._C, "has_lapack", False)),
        "OPENCV": importlib.util.find_spec("cv2") is not None,
        "DIST_KVSTORE": dist,
        "CXX14": True,
        "INT64_TENSOR_SIZE": True,
    }


@functools.lru_cache(maxsize=1)
def feature_list() -> list:
    """The features, as :class:`Feature` objects, in MXNet's order."""
    found = _detect()
    return [Feature(name, found.get(name, False)) for name in _NAMES]


class Features(collections.OrderedDict):
    """``OrderedDict`` of feature name to :class:`Feature` (one shared instance)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super(Features, cls.instance).__init__((f.name, f) for f in feature_list())
        return cls.instance

    def __init__(self):  # the instance is filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` (any case) is enabled; RuntimeError for unknown names."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"Feature '{name}' is unknown, known features are: {list(self.keys())}")
        return self[name].enabled
