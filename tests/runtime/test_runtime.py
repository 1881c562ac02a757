"""``mx.runtime`` as MXNet 1.9.1's: Feature/Features/feature_list with MXNet's feature names in
its order, reporting what neomx can really use."""
from __future__ import annotations

import collections

import pytest
import torch

import neomx as mx

MXNET_NAMES = ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
               "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
               "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
               "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14",
               "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP"]  # MXNet 1.9.1's list


def test_features_as_mxnet():
    f = mx.runtime.Features()
    assert isinstance(f, collections.OrderedDict) and mx.runtime.Features() is f
    assert list(f) == MXNET_NAMES == [x.name for x in mx.runtime.feature_list()]
    assert repr(f["TVM_OP"]) == "✖ TVM_OP"
    assert repr(f).startswith("[") and "TVM_OP" in repr(f)
    assert f.is_enabled("cuda") == torch.cuda.is_available()
    assert f.is_enabled("DIST_KVSTORE") == torch.distributed.is_available()
    assert not f.is_enabled("MKLDNN") and not f.is_enabled("TENSORRT") and not f.is_enabled("TVM_OP")
    with pytest.raises(RuntimeError, match="Feature 'NOPE' is unknown"):
        f.is_enabled("nope")


def test_numpy_shape_switches_at_top_level():
    # MXNet 1.9.1 exports them from mx; neomx keeps MXNet 1.x's legacy shapes only
    for name in ("set_np_shape", "is_np_shape", "np_shape", "use_np_shape", "is_np_array", "use_np",
                 "np_array"):
        assert getattr(mx, name) is getattr(mx.util, name)
    assert mx.is_np_shape() is False
    with pytest.raises(mx.MXNetError):
        mx.set_np_shape(True)
