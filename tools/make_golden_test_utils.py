"""MXNet 1.9.1's mx.test_utils behaviour -> ``tests/golden/test_utils/test_utils.json``.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_test_utils.py

Records, for ``tests/test_utils/``:

* ``mismatch``: ``assert_almost_equal`` on fixed arrays -- whether it raised, ``str`` of the
  AssertionError and what it printed to stdout (MXNet's mismatch report);
* ``checkers``: ``check_numeric_gradient`` / ``check_symbolic_forward`` /
  ``check_symbolic_backward`` on small graphs with right and wrong expectations -- whether each
  passed and the first two lines of the report (the numeric values of numeric gradients are
  left out: float32 finite differences differ in the last bits);
* ``chisquare``: ``chi_square_check`` of fixed samples (p-value from scipy.stats.chisquare);
* ``random``: helpers drawing from NumPy's global legacy RNG after ``np.random.seed``;
* ``misc``: ``np_reduce``, ``collapse_sum_like``, ``gen_buckets_probs_with_ppf``,
  ``NotImplementedForSymbol``'s text, ``is_np_shape``, ``set_np_shape(False)``.
"""
import contextlib
import io
import os

from _oracle_common import golden_dir, jsonable, write_json  # sets MXNET_SUBGRAPH_VERBOSE first
import numpy as np
import mxnet as mx
from mxnet import test_utils as tu

F32 = np.float32


def run(f):
    """{'raised': bool, 'message': str, 'stdout': str} of calling ``f()``."""
    out = io.StringIO()
    raised, message = False, ''
    with contextlib.redirect_stdout(out):
        try:
            f()
        except AssertionError as e:
            raised, message = True, str(e)
    np.set_printoptions(edgeitems=3, threshold=1000, suppress=False)  # MXNet changes them
    return {'raised': raised, 'message': message, 'stdout': out.getvalue()}


def mismatch_cases():
    a23 = np.array([[1, 2, 3], [4, 5, 6]], dtype=F32)
    b23 = a23.copy()
    b23[0, 1] += 0.5
    b23[1, 2] -= 2.0
    big = np.linspace(0, 1, 100).astype(F32)
    big_b = big.copy()
    big_b[::7] += 1
    cases = {
        'two_of_six': dict(a=a23, b=b23),
        'names': dict(a=a23, b=b23, names=('EXPECTED', 'FORWARD')),
        'at_least': dict(a=big, b=big_b, mismatches=(3, 4)),
        'unlimited': dict(a=big, b=big_b, mismatches=(2, 0)),
        'float64_tol': dict(a=a23.astype(np.float64), b=a23.astype(np.float64) + 1e-4),
        'explicit_tol_pass': dict(a=a23, b=b23, rtol=1.0, atol=2.0),
        'explicit_tol_fail': dict(a=a23, b=b23, rtol=0.1, atol=0.1),
        'default_f32_pass': dict(a=a23, b=a23 + 5e-4),
        'default_f16_pass': dict(a=a23.astype(np.float16), b=a23.astype(np.float16) + 0.05),
        'mixed_f16_f32_pass': dict(a=a23.astype(np.float16), b=a23 + 0.05),
        'nan_fail': dict(a=np.array([1, np.nan], F32), b=np.array([1, np.nan], F32)),
        'nan_equal': dict(a=np.array([1, np.nan], F32), b=np.array([1, np.nan], F32),
                          equal_nan=True),
        'inf_equal': dict(a=np.array([1, np.inf], F32), b=np.array([1, np.inf], F32)),
        'scalar': dict(a=np.array(1.0, F32), b=np.array(2.0, F32)),
        'broadcast_pass': dict(a=np.ones((2, 3), F32), b=np.ones((3,), F32)),
        'int_exact': dict(a=np.array([1, 2], np.int32), b=np.array([1, 3], np.int32)),
        'bool_equal': dict(a=np.array([True, False]), b=np.array([True, False])),
    }
    out = {}
    for key, kw in cases.items():
        a, b = kw.pop('a'), kw.pop('b')
        out[key] = dict(a=a.tolist(), b=b.tolist(), a_dtype=a.dtype.name, b_dtype=b.dtype.name,
                        kwargs=jsonable(kw),
                        result=run(lambda: tu.assert_almost_equal(a, b, **kw)))
        if key == 'two_of_six':  # the same through NDArrays (MXNet's allclose path)
            na, nb = mx.nd.array(a, dtype=a.dtype), mx.nd.array(b, dtype=b.dtype)
            out[key + '_nd'] = dict(out[key], result=run(
                lambda: tu.assert_almost_equal(na, nb, **kw)))
    out['allclose_1e-7'] = dict(result=run(lambda: tu.assert_allclose(a23, a23 + 1e-7)))
    out['allclose_1e-5'] = dict(result=run(lambda: tu.assert_allclose(a23, a23 + 1e-5)))
    return out


def head(text, n=3):
    return '\n'.join(text.split('\n')[:n])


def checker_cases():
    x, y = mx.sym.Variable('x'), mx.sym.Variable('y')
    rs = np.random.RandomState(7)
    xv = rs.uniform(0.5, 1.5, (2, 3)).astype(F32)
    yv = rs.uniform(0.5, 1.5, (2, 3)).astype(F32)
    og = rs.uniform(-1, 1, (2, 3)).astype(F32)
    mul = x * y
    cases = {
        'numeric_mul': lambda: tu.check_numeric_gradient(mul, [xv, yv]),
        'numeric_mul_f64': lambda: tu.check_numeric_gradient(mul, [xv, yv], dtype=np.float64),
        'numeric_exp_add_null': lambda: tu.check_numeric_gradient(
            mx.sym.exp(x) + y, {'x': xv, 'y': yv}, grad_nodes={'x': 'add', 'y': 'null'}),
        'numeric_blockgrad_wrong': lambda: tu.check_numeric_gradient(
            mx.sym.BlockGrad(x) * y, [xv, yv]),
        'forward_right': lambda: tu.check_symbolic_forward(mul, [xv, yv], [xv * yv]),
        'forward_wrong': lambda: tu.check_symbolic_forward(mul, [xv, yv], [xv * yv + 1]),
        'forward_dict': lambda: tu.check_symbolic_forward(
            mul, {'x': xv, 'y': yv}, {mul.list_outputs()[0]: xv * yv}),
        'backward_right': lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], [og * yv, og * xv]),
        'backward_add': lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], {'x': og * yv, 'y': og * xv}, grad_req='add'),
        'backward_null': lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], {'x': og * yv, 'y': og * xv}, grad_req={'x': 'write',
                                                                            'y': 'null'}),
        'backward_wrong': lambda: tu.check_symbolic_backward(
            mul, [xv, yv], [og], [og * xv, og * xv]),
    }
    out = {}
    for key, f in cases.items():
        np.random.seed(0)
        with mx.name.NameManager():
            r = run(f)
        out[key] = {'raised': r['raised'], 'message_head': head(r['message'])}
    out['forward_wrong_full'] = None
    np.random.seed(0)
    r = run(cases['forward_wrong'])
    out['forward_wrong_full'] = r
    out['inputs'] = {'x': xv.tolist(), 'y': yv.tolist(), 'out_grad': og.tolist()}
    return out


def chisquare_cases():
    out = {}
    samples_c = np.random.RandomState(3).normal(size=2000)
    q = 1.1503493803760079  # standard normal quantile of 0.875
    buckets = [(-np.inf, -q), (-q, 0.0), (0.0, q), (q, np.inf)]
    probs = [0.125, 0.375, 0.375, 0.125]  # exact in float32, so expected counts sum to n
    p, obs, exp = tu.chi_square_check(lambda n: samples_c[:n], buckets, probs, nsamples=2000)
    out['continuous'] = dict(samples_seed=3, nsamples=2000, buckets=[list(b) for b in buckets],
                             probs=probs, p=p, obs=obs.tolist(), exp=exp.tolist())
    samples_d = np.random.RandomState(4).randint(0, 3, size=3000)
    p, obs, exp = tu.chi_square_check(lambda n: samples_d[:n], [0, 1, 2], [0.25, 0.25, 0.5],
                                      nsamples=3000)
    out['discrete_wrong'] = dict(samples_seed=4, nsamples=3000, buckets=[0, 1, 2],
                                 probs=[0.25, 0.25, 0.5], p=p, obs=obs.tolist(), exp=exp.tolist())
    return out


def random_cases():
    out = {}
    np.random.seed(11)
    out['rand_shape_2d'] = tu.rand_shape_2d()
    out['rand_shape_3d'] = tu.rand_shape_3d(4, 5, 6)
    out['rand_shape_nd'] = tu.rand_shape_nd(4, 7)
    out['rand_shape_nd_zero'] = tu.rand_shape_nd(5, 2, allow_zero_size=True)
    out['random_arrays'] = [a.tolist() for a in tu.random_arrays((2,), (1, 2))]
    out['random_sample'] = tu.random_sample(list(range(10)), 4)
    np.random.seed(12)
    out['rand_ndarray'] = tu.rand_ndarray((2, 2)).asnumpy().tolist()
    return jsonable(out)


def misc_cases():
    dat = np.arange(24, dtype=F32).reshape(2, 3, 4)
    out = {
        'np_reduce_sum_02_keep': tu.np_reduce(dat, (0, 2), True, np.sum).tolist(),
        'np_reduce_max_1': tu.np_reduce(dat, 1, False, np.max).tolist(),
        'np_reduce_all': tu.np_reduce(dat, None, False, np.sum).tolist(),
        'collapse_sum_like': tu.collapse_sum_like(dat, (3, 1)).tolist(),
        'buckets': tu.gen_buckets_probs_with_ppf(lambda q: 2 * q - 1, 4),
        'not_implemented_for_symbol': str(mx.base.NotImplementedForSymbol(len, 'len', 1, 'a')),
        'not_implemented_no_alias': str(mx.base.NotImplementedForSymbol(len, None)),
        'is_np_shape': mx.util.is_np_shape(),
        'set_np_shape_false': mx.util.set_np_shape(False),
        'as_list': [mx.base._as_list(1), mx.base._as_list([1]), list(mx.base._as_list((1,)))],
        'py_str': mx.base.py_str(b'abc'),
        'same': [tu.same(np.ones(2), np.ones(2)), tu.same(np.ones(2), np.ones(3))],
        'almost_equal': [tu.almost_equal(np.ones(2), np.ones(2) + 1e-9),
                         tu.almost_equal(np.ones(2), np.ones(2) + 1e-3)],
    }
    return jsonable(out)


def main():
    out = {'mxnet_version': mx.__version__, 'generator': 'tools/make_golden_test_utils.py',
           'mismatch': mismatch_cases(), 'checkers': checker_cases(),
           'chisquare': chisquare_cases(), 'random': random_cases(), 'misc': misc_cases()}
    folder = golden_dir('test_utils')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, 'test_utils.json')
    write_json(path, jsonable(out))
    print('wrote', path)


if __name__ == '__main__':
    main()
