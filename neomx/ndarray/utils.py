"""Utility functions for NDArray and BaseSparseNDArray (MXNet 1.9.1's ``mxnet.ndarray.utils``):
the creation functions that dispatch on a storage type (``stype``), and the ``.params`` file
functions."""
from __future__ import annotations

from .ndarray import NDArray
from .serialization import load, load_frombuffer, save

__all__ = ["zeros", "empty", "array", "load", "load_frombuffer", "save"]


def _dense():
    from .. import ndarray  # the package: its creation functions are defined after this module
    return ndarray


def _is_scipy_csr(source_array) -> bool:
    try:
        import scipy.sparse as spsp
    except ImportError:
        return False
    return isinstance(source_array, spsp.csr_matrix)


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """Return a new array of given shape and type, filled with zeros.

    Parameters
    ----------
    shape : int or tuple of int
        The shape of the empty array
    ctx : Context, optional
        An optional device context (default is the current default context)
    dtype : str or numpy.dtype, optional
        An optional value type (default is `float32`)
    stype: string, optional
        The storage type of the empty array, such as 'row_sparse', 'csr', etc.

    Returns
    -------
    NDArray, CSRNDArray or RowSparseNDArray
        A created array

    Examples
    --------
    >>> import neomx as mx
    >>> mx.nd.utils.zeros((1, 2), mx.cpu(), stype='csr').stype
    'csr'
    >>> mx.nd.utils.zeros((1, 2), mx.cpu(), 'float16', stype='row_sparse').asnumpy()
    array([[0., 0.]], dtype=float16)
    """
    if stype is None or stype == "default":
        return _dense().zeros(shape, ctx, dtype, **kwargs)
    from .sparse import zeros as sparse_zeros
    return sparse_zeros(stype, shape, ctx, dtype, **kwargs)


def empty(shape, ctx=None, dtype=None, stype=None):
    """Returns a new array of given shape and type, without initializing entries (``stype``:
    'default', 'row_sparse' or 'csr')."""
    if stype is None or stype == "default":
        return _dense().empty(shape, ctx, dtype)
    from .sparse import empty as sparse_empty
    return sparse_empty(stype, shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None):
    """Creates an array from any object exposing the array interface; a scipy CSR matrix or a
    sparse NDArray gives a sparse array of the same storage type.

    Examples
    --------
    >>> import neomx as mx
    >>> mx.nd.utils.array(mx.nd.zeros((3, 2), stype='row_sparse')).stype
    'row_sparse'
    """
    if _is_scipy_csr(source_array) or (isinstance(source_array, NDArray)
                                       and source_array.stype != "default"):
        from .sparse import array as sparse_array
        return sparse_array(source_array, ctx=ctx, dtype=dtype)
    return _dense().array(source_array, ctx=ctx, dtype=dtype)
