"""Weight initializers (``mx.init`` / ``mx.initializer``), as in MXNet 1.9.1.

An initializer is called as ``init(InitDesc(name, attrs), arr)`` and fills ``arr`` in place.
It dispatches on the variable's ``__init__`` attribute first (a ``dumps()`` string, as
``mx.sym.Variable(init=...)`` stores it), then on the name's suffix:

=================  =========================================================
``...weight``      ``_init_weight`` (the initializer's own rule)
``...bias``        0 (``_init_bias``; Constant/One leave biases at 0 too)
``...gamma``       1
``...beta``        0
``...min``         0
``...max``         1
anything else      ValueError "Unknown initialization pattern for <name>..."
=================  =========================================================

Calling with a plain ``str`` name is MXNet's deprecated legacy path (DeprecationWarning); it
also knows ``moving_mean`` (0), ``moving_var`` (1), ``moving_inv_var``/``moving_avg`` (0),
``upsampling*`` (bilinear) and ``stn_loc*``.

Initializers are registered by lowercased class name (plus aliases), so strings work wherever
an initializer is expected: ``mx.init.create('xavier', magnitude=2)``, or a ``dumps()`` string.
Random draws use ``mx.random`` (torch generators): the distributions match MXNet, the values do
not.
"""
from __future__ import annotations

import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero", "One",
           "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear",
           "LSTMBias"]


class InitDesc(str):
    """A parameter name (a ``str``) carrying the variable's ``attrs`` and a ``global_init``.

    Parameters
    ----------
    name : str
        Name of the variable.
    attrs : dict of str to str, optional
        The variable's attributes (``Symbol.attr_dict()[name]``); ``__init__`` selects an
        initializer for this variable alone.
    global_init : Initializer, optional
        The initializer to fall back to (set to the caller on first use).

    Examples
    --------
    >>> import neomx as mx
    >>> d = mx.init.InitDesc('fc1_weight', {'__init__': '["one", {}]'})
    >>> d, d.attrs
    ('fc1_weight', {'__init__': '["one", {}]'})
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# --- registry (one per base class, as MXNet's mxnet.registry) ---------------------------------
_REGISTRY: dict = {}


def _register(klass, name=None):
    assert issubclass(klass, Initializer), "Can only register subclass of Initializer"
    name = (klass.__name__ if name is None else name).lower()
    if name in _REGISTRY:
        warnings.warn(f"New initializer {klass.__module__}.{klass.__name__} registered with name "
                      f"{name} is overriding existing initializer {_REGISTRY[name].__module__}."
                      f"{_REGISTRY[name].__name__}", UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def register(klass):
    """Register an Initializer subclass under its lowercased class name (a class decorator).

    Examples
    --------
    >>> import neomx as mx
    >>> @mx.init.register
    ... class HalfInit(mx.init.Initializer):
    ...     def _init_weight(self, _, arr):
    ...         arr[:] = 0.5
    >>> type(mx.init.create('halfinit')).__name__
    'HalfInit'
    """
    return _register(klass)


def alias(*aliases):
    """A class decorator registering the class under extra names."""
    def reg(klass):
        for name in aliases:
            _register(klass, name)
        return klass
    return reg


def create(*args, **kwargs):
    """An initializer from an instance (returned as is), a registered name (``'xavier'``),
    a ``dumps()`` string (``'["uniform", {"scale": 0.1}]'``), a JSON object string or a dict
    with an ``initializer`` key; extra arguments go to the constructor.

    Examples
    --------
    >>> import neomx as mx
    >>> mx.init.create('normal', sigma=0.5).dumps()
    '["normal", {"sigma": 0.5}]'
    """
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop("initializer")
    if isinstance(name, Initializer):
        assert not args and not kwargs, \
            "initializer is already an instance. Additional arguments are invalid"
        return name
    if isinstance(name, dict):
        return create(**name)
    assert isinstance(name, str), "initializer must be of string type"
    if name.startswith("["):
        assert not args and not kwargs
        name, kwargs = json.loads(name)
        return create(name, **kwargs)
    if name.startswith("{"):
        assert not args and not kwargs
        return create(**json.loads(name))
    name = name.lower()
    assert name in _REGISTRY, \
        f"{name} is not registered. Please register with initializer.register first"
    return _REGISTRY[name](*args, **kwargs)


# --- base class ---------------------------------------------------------------------------------
def _fill(arr, value):
    arr[:] = value


def _uniform(low, high, arr):
    from . import random
    random.uniform(low, high, arr.shape, out=arr)


def _normal(loc, scale, arr):
    from . import random
    random.normal(loc, scale, arr.shape, out=arr)


class Initializer:
    """The base class of initializers: subclasses define ``_init_weight(name, arr)``.

    ``__init__`` keyword arguments are kept for ``dumps()``, so a subclass should pass them to
    ``super().__init__``.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log ``'Initialized <name> as <pattern>: <print_func(arr)>'`` for every array
        (default statistic: ``norm(arr) / sqrt(arr.size)``)."""
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                return str(float(np.linalg.norm(x.asnumpy().astype(np.float64))) / sqrt(x.size))
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """``'["<name>", {kwargs}]'``, the form stored in a Variable's ``__init__`` attribute.

        Examples
        --------
        >>> import neomx as mx
        >>> mx.init.Xavier(factor_type="in", magnitude=2.34).dumps()
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'
        """
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Fill ``arr`` by ``desc``'s ``__init__`` attribute or name suffix (see the module doc)."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in (("weight", self._init_weight), ("bias", self._init_bias),
                               ("gamma", self._init_gamma), ("beta", self._init_beta),
                               ("min", self._init_zero), ("max", self._init_one),
                               ("weight_quantize", self._init_quantized_weight),
                               ("bias_quantize", self._init_quantized_bias)):
            if desc.endswith(suffix):
                method(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        """MXNet's deprecated ``init(str, arr)`` rules."""
        from .ndarray import NDArray
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated."
                      "please use init(mx.init.InitDesc(...), NDArray) instead.",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if not isinstance(arr, NDArray):
            raise TypeError("arr must be NDArray")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        elif name.endswith("bias"):
            self._init_bias(name, arr)
        elif name.endswith("gamma"):
            self._init_gamma(name, arr)
        elif name.endswith("beta"):
            self._init_beta(name, arr)
        elif name.endswith("weight"):
            self._init_weight(name, arr)
        elif name.endswith(("moving_mean", "moving_inv_var", "moving_avg", "min")):
            self._init_zero(name, arr)
        elif name.endswith(("moving_var", "max")):
            self._init_one(name, arr)
        else:
            self._init_default(name, arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear(arr.shape)

    def _init_loc_bias(self, _, arr):
        assert arr.shape[0] == 6
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        _fill(arr, 0.0)

    def _init_one(self, _, arr):
        _fill(arr, 1.0)

    def _init_bias(self, _, arr):
        _fill(arr, 0.0)

    def _init_quantized_bias(self, _, arr):
        _fill(arr, 0)

    def _init_gamma(self, _, arr):
        _fill(arr, 1.0)

    def _init_beta(self, _, arr):
        _fill(arr, 0.0)

    def _init_quantized_weight(self, _, arr):
        import torch
        # as MXNet: one draw from [-127, 127), broadcast to the whole array
        arr[:] = torch.randint(-127, 127, (1,)).numpy().astype(np.int8)

    def _init_weight(self, name, arr):
        raise NotImplementedError("Must override it")

    def _init_default(self, name, _):
        raise ValueError(
            f"Unknown initialization pattern for {name}. Default initialization is now limited "
            'to "weight", "bias", "gamma" (1.0), and "beta" (0.0).Please use '
            "mx.sym.Variable(init=mx.init.*) to set initialization pattern")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None  # as in MXNet: __eq__ without __hash__


def _bilinear(shape):
    """MXNet's bilinear upsampling kernel for a 4-D shape (float32)."""
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    i = np.arange(int(np.prod(shape)))
    x = i % shape[3]
    y = (i // shape[3]) % shape[2]
    weight = (1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))
    return weight.astype(np.float32).reshape(shape)


# --- composite initializers (plain callables, not registered) ---------------------------------
class Load:
    """Initialize from a saved file or a ``{name: NDArray}`` dict (``arg:``/``aux:`` prefixes
    are dropped); names not found go to ``default_init``.

    Parameters
    ----------
    param : str or dict of str to NDArray
    default_init : Initializer, optional
    verbose : bool
        Log where each array came from.
    """

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            from . import ndarray
            param = ndarray.load(param)
        assert isinstance(param, dict)
        self.param = {}
        for name, arr in param.items():
            if name.startswith("arg:") or name.startswith("aux:"):
                self.param[name[4:]] = arr
            else:
                self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            assert arr.shape == self.param[name].shape, \
                (f"Parameter {name} cannot be initialized from loading. Shape mismatch, target "
                 f"{arr.shape} vs loaded {self.param[name].shape}")
            arr[:] = self.param[name]
            if self.verbose:
                logging.info("Initialized %s by loading", name)
        else:
            assert self.default_init is not None, \
                (f"Cannot Initialize {name}. Not found in loaded param and no default "
                 "Initializer is provided.")
            self.default_init(name, arr)
            if self.verbose:
                logging.info("Initialized %s by default", name)


class Mixed:
    """Pick the initializer of the first regular expression (``re.match``) matching the name.

    Examples
    --------
    >>> import neomx as mx
    >>> init = mx.init.Mixed(['bias', '.*'], [mx.init.Zero(), mx.init.One()])
    >>> a = mx.nd.zeros((2,))
    >>> init(mx.init.InitDesc('fc_weight'), a)
    >>> a.asnumpy()
    array([1., 1.], dtype=float32)
    """

    def __init__(self, patterns, initializers):
        assert len(patterns) == len(initializers)
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        # MXNet's message, with its unformatted %s
        raise ValueError('Parameter name %s did not match any pattern. Consider'
                         'add a ".*" pattern at the and with default Initializer.')


# --- registered initializers --------------------------------------------------------------------
@register
@alias("zeros")
class Zero(Initializer):
    """Weights 0."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill(arr, 0)


@register
@alias("ones")
class One(Initializer):
    """Weights 1 (biases still 0)."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill(arr, 1)


@register
class Constant(Initializer):
    """Weights set to ``value``, a scalar or an array broadcast to the weight's shape."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        val = self._kwargs["value"]
        if not np.isscalar(val):
            arr = val if isinstance(val, np.ndarray) else val.asnumpy()
            self._kwargs["value"] = arr.tolist()
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Weights drawn from U(-scale, scale).

    Examples
    --------
    >>> import neomx as mx
    >>> w = mx.nd.zeros((3, 4))
    >>> mx.init.Uniform(0.1)(mx.init.InitDesc('fc_weight'), w)
    >>> bool((abs(w) <= 0.1).asnumpy().all())
    True
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _uniform(-self.scale, self.scale, arr)


@register
class Normal(Initializer):
    """Weights drawn from N(0, sigma²)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _normal(0, self.sigma, arr)


@register
class Orthogonal(Initializer):
    """``scale`` times an orthogonal matrix (from the SVD of a uniform or normal draw) reshaped
    to the weight (Saxe et al., 2013)."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        from . import ndarray as nd
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        tmp = nd.zeros((nout, nin))
        if self.rand_type == "uniform":
            _uniform(-1.0, 1.0, tmp)
        elif self.rand_type == "normal":
            _normal(0.0, 1.0, tmp)
        tmp = tmp.asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """Glorot/Xavier initialization.

    With ``fan_in = shape[1]·∏shape[2:]`` and ``fan_out = shape[0]·∏shape[2:]``, ``factor`` is
    their mean (``'avg'``), ``fan_in`` (``'in'``) or ``fan_out`` (``'out'``) and
    ``scale = sqrt(magnitude / factor)``; weights come from U(-scale, scale)
    (``rnd_type='uniform'``) or N(0, scale²) (``'gaussian'``). Needs a weight of 2 or more
    dimensions.
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. "
                             "It requires at least 2D.")
        hw_scale = np.prod(shape[2:]) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError("Incorrect factor type")
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == "uniform":
            _uniform(-scale, scale, arr)
        elif self.rnd_type == "gaussian":
            _normal(0, scale, arr)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialization for PReLU nets: Gaussian Xavier with
    ``magnitude = 2 / (1 + slope²)``."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Bilinear interpolation kernels for 4-D upsampling (deconvolution) weights."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear(arr.shape)


@register
class LSTMBias(Initializer):
    """Zeros except the forget gate (the second quarter of the rows), set to ``forget_bias``.

    It is applied through ``_init_weight``, so use it as a Variable's ``init``.
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias
