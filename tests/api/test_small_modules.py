"""MXNet 1.9.1's small modules as neomx has them: mx.error, mx.log, mx.registry, mx.misc, the
mx.base helpers, mx.nd.utils, the re-exported names of mx.nd.ndarray / mx.sym.symbol, and the
device queries (mx.context.gpu_memory_info, mx.util.get_gpu_*: MXNet's errors without a GPU,
torch.cuda's values with one)."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
import neomx.misc

GOLDEN = json.loads((Path(__file__).parents[1] / "golden" / "contrib_text" / "golden.json")
                    .read_text())
HAS_GPU = mx.util.get_gpu_count() > 0


# --- mx.error -----------------------------------------------------------------------------------
def test_error_registry():
    assert mx.error.MXNetError is mx.MXNetError
    err = mx.error.InternalError("boom")
    assert isinstance(err, mx.MXNetError) and isinstance(err, RuntimeError)
    assert str(err).startswith("boom\nMXNet hint: You hit an internal error.")
    assert str(mx.error.InternalError("x MXNet hint: y")) == "x MXNet hint: y"
    assert mx.error.error_types["ValueError"] is ValueError

    @mx.error.register
    class MyError(mx.MXNetError):
        pass
    mx.error.register("Other", KeyError)
    assert isinstance(mx.error.create_error("MyError: detail"), MyError)
    assert isinstance(mx.error.create_error("Other: k"), KeyError)
    assert type(mx.error.create_error("no name here")) is mx.MXNetError


# --- mx.log -------------------------------------------------------------------------------------
def test_get_logger_stream_and_file(tmp_path, capsys):
    assert (mx.log.CRITICAL, mx.log.DEBUG, mx.log.NOTSET) == (50, 10, 0)
    logger = mx.log.get_logger("neomx.test.stream", level=mx.log.INFO)
    assert mx.log.get_logger("neomx.test.stream") is logger and len(logger.handlers) == 1
    assert logger.level == mx.log.INFO
    logger.info("hello %d", 7)
    err = capsys.readouterr().err
    assert err.startswith("\x1b[32mI") and "test_small_modules.py:test_get_logger_stream_and_file:" \
        in err and err.endswith("]\x1b[0m hello 7\n")
    path = tmp_path / "log.txt"
    flog = mx.log.get_logger("neomx.test.file", filename=str(path), filemode="w")
    flog.warning("to file")
    flog.handlers[0].flush()
    assert path.read_text() == "to file\n"
    assert mx.log.get_logger() is logging.getLogger()
    with pytest.warns(DeprecationWarning, match="getLogger is deprecated"):
        assert mx.log.getLogger("neomx.test.stream") is logger


def test_formatter_labels():
    f = mx.log._Formatter()
    rec = logging.LogRecord("n", logging.CRITICAL, "/p/f.py", 3, "m", None, None, func="fn")
    assert f.format(rec).startswith("\x1b[31mC")
    rec.levelno = 5
    assert f.format(rec).startswith("\x1b[34mU")


# --- mx.registry --------------------------------------------------------------------------------
def test_registry_functions():
    class Base:
        def __init__(self, a=0):
            self.a = a
    register = mx.registry.get_register_func(Base, "thing")
    alias = mx.registry.get_alias_func(Base, "thing")
    create = mx.registry.get_create_func(Base, "thing")

    @alias("t1", "T2")
    @register
    class Thing(Base):
        pass
    assert set(mx.registry.get_registry(Base)) == {"thing", "t1", "t2"}
    assert create("THING", a=2).a == 2 and create("t2").a == 0
    assert create('["t1", {"a": 5}]').a == 5
    assert create('{"thing": "thing", "a": 6}').a == 6
    assert create({"thing": "t1", "a": 7}).a == 7
    inst = Thing()
    assert create(inst) is inst
    with pytest.raises(AssertionError, match="already an instance"):
        create(inst, a=1)
    with pytest.raises(AssertionError, match="nope is not registered"):
        create("nope")
    with pytest.raises(AssertionError, match="thing must be of string type"):
        create(3)
    with pytest.raises(AssertionError, match="Can only register subclass of Base"):
        register(int)
    with pytest.warns(UserWarning, match="overriding existing thing"):
        register(Thing)


# --- mx.misc ------------------------------------------------------------------------------------
def test_misc_factor_scheduler():
    s = mx.misc.FactorScheduler(step=3, factor=0.5)
    np.testing.assert_allclose([s(i) for i in range(10)], GOLDEN["factor_scheduler"])
    with pytest.raises(ValueError, match="Schedule step must be greater or equal than 1 round"):
        mx.misc.FactorScheduler(0)
    with pytest.raises(ValueError, match="Factor must be less than 1 to make lr reduce"):
        mx.misc.FactorScheduler(1, 1.0)
    with pytest.raises(NotImplementedError, match="must override this"):
        mx.misc.LearningRateScheduler()(0)


# --- mx.base ------------------------------------------------------------------------------------
def test_base_helpers():
    assert mx.base.basestring is str and mx.base.long is int
    doc = mx.base.build_param_doc(["a", "num_args", "a"], ["int", "int", "int"], ["x", "", ""])
    assert doc == "Parameters\n----------\na : int\n    x\n"

    class Meta(type):
        pass

    class A(mx.base.with_metaclass(Meta, object)):
        @mx.base.classproperty
        def name(cls):
            return cls.__name__
    assert type(A) is Meta and A.name == "A" and A().name == "A"

    def f():
        """Doc."""
    mod = type(mx)("fake_module")
    mod.f = f
    mx.base.add_fileline_to_docstring(mod)
    assert "From:" in f.__doc__ and f.__doc__.endswith(":%d" % f.__code__.co_firstlineno)


# --- mx.nd.utils and the re-exports -------------------------------------------------------------
def test_ndarray_utils(tmp_path):
    u = mx.nd.utils
    assert u.zeros((2, 3), dtype="float16").dtype == np.float16
    assert u.zeros((2, 3), stype="csr").stype == "csr"
    assert u.zeros((2, 3), stype="default").stype == "default"
    assert u.empty((2, 2), stype="row_sparse").stype == "row_sparse"
    assert u.empty((2, 2)).shape == (2, 2)
    rsp = mx.nd.zeros((3, 2), stype="row_sparse")
    assert u.array(rsp).stype == "row_sparse"
    np.testing.assert_array_equal(u.array([[1, 2]]).asnumpy(), [[1, 2]])
    path = str(tmp_path / "a.params")
    u.save(path, {"w": mx.nd.ones((2,))})
    assert u.load(path)["w"].asnumpy().tolist() == [1, 1]
    with open(path, "rb") as f:
        assert list(u.load_frombuffer(f.read())) == ["w"]


def test_reexports():
    import neomx.ndarray.ndarray as ndm
    import neomx.symbol.symbol as symm
    for name in ("zeros", "add", "onehot_encode", "waitall", "moveaxis", "imdecode"):
        assert getattr(ndm, name) is getattr(mx.nd, name)
    for name in ("pow", "zeros", "hypot", "split_v2"):
        assert getattr(symm, name) is getattr(mx.sym, name)
    with pytest.raises(AttributeError):
        ndm.not_a_name
    assert mx.rnd is mx.random and mx.use_np_array is mx.util.use_np_array


# --- devices ------------------------------------------------------------------------------------
@pytest.mark.skipif(HAS_GPU, reason="MXNet's errors without a GPU")
def test_gpu_queries_without_a_gpu():
    import torch
    assert mx.util.get_gpu_count() == 0
    msg = ("This call is only supported for MXNet built with CUDA support."
           if not torch.backends.cuda.is_built() else "no CUDA-capable device")
    for call in (lambda: mx.context.gpu_memory_info(), lambda: mx.context.gpu_memory_info(0),
                 lambda: mx.util.get_gpu_memory(0)):
        with pytest.raises(mx.MXNetError, match=msg):
            call()
    with pytest.raises(OSError, match="could not load any of: libcuda.so libcuda.dylib cuda.dll"):
        mx.util.get_cuda_compute_capability(mx.gpu(0))


def test_compute_capability_of_a_cpu_context():
    with pytest.raises(ValueError, match="Expecting a gpu context to get cuda compute capability, "
                                         r"while received ctx cpu\(0\)"):
        mx.util.get_cuda_compute_capability(mx.cpu())


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_gpu_queries_with_a_gpu():
    import torch
    assert mx.util.get_gpu_count() == torch.cuda.device_count()
    free, total = mx.context.gpu_memory_info(0)
    assert isinstance(free, int) and 0 < free <= total
    assert total == torch.cuda.get_device_properties(0).total_memory
    assert mx.util.get_gpu_memory(0)[1] == total
    major, minor = torch.cuda.get_device_capability(0)
    assert mx.util.get_cuda_compute_capability(mx.gpu(0)) == major * 10 + minor
    n = mx.util.get_gpu_count()
    with pytest.raises(mx.MXNetError, match="invalid device ordinal"):
        mx.context.gpu_memory_info(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        mx.util.get_cuda_compute_capability(mx.gpu(n))
