"""mx.contrib.svrg_optimization (SVRGModule, the SVRG optimizers) against MXNet 1.9.1's runs
recorded by tools/make_golden_svrg.py (tests/golden/svrg/svrg.npz)."""
import logging
from pathlib import Path

import numpy as np
import pytest

import neomx as mx
from neomx.contrib.svrg_optimization import svrg_optimizer
from neomx.contrib.svrg_optimization.svrg_module import SVRGModule

GOLDEN = np.load(Path(__file__).resolve().parents[1] / "golden" / "svrg" / "svrg.npz")
INIT = {k[len("init/"):]: GOLDEN[k] for k in GOLDEN.files if k.startswith("init/")}


def network():
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('lin_reg_label')
    fc = mx.sym.FullyConnected(data, num_hidden=1, name='fc1')
    return mx.sym.LinearRegressionOutput(fc, label, name='lro')


def make_iter():
    return mx.io.NDArrayIter(GOLDEN["X"], GOLDEN["y"], batch_size=5, shuffle=False,
                             last_batch_handle='pad', label_name='lin_reg_label')


def module(ctx=None, update_freq=2):
    return SVRGModule(network(), data_names=['data'], label_names=['lin_reg_label'],
                      context=ctx or mx.cpu(), update_freq=update_freq,
                      logger=logging.getLogger("test_svrg"))


CASES = {
    "plain": (None, 2, 4, (('learning_rate', 0.05),)),
    "momentum": (None, 1, 3, (('learning_rate', 0.05), ('momentum', 0.9), ('wd', 0.01))),
    "twodev": ([mx.cpu(0), mx.cpu(1)], 2, 3, (('learning_rate', 0.05),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_matches_mxnet(case):
    ctx, update_freq, num_epoch, opt_params = CASES[case]
    mod = module(ctx, update_freq)
    mses = []
    mod.fit(make_iter(), eval_metric='mse', optimizer='sgd', optimizer_params=opt_params,
            num_epoch=num_epoch, arg_params={k: mx.nd.array(v) for k, v in INIT.items()},
            batch_end_callback=lambda p: mses.append(p.eval_metric.get()[1]))
    arg, _ = mod.get_params()
    for k, v in arg.items():
        np.testing.assert_allclose(v.asnumpy(), GOLDEN[f"{case}/trained/{k}"], rtol=1e-4,
                                   atol=1e-5, err_msg=k)
        np.testing.assert_allclose(mod._param_dict[0][k].asnumpy(), GOLDEN[f"{case}/full/{k}"],
                                   rtol=1e-4, atol=1e-5, err_msg=k)
    np.testing.assert_allclose(mses, GOLDEN[f"{case}/mse"], rtol=1e-4, atol=1e-6)


def test_update_full_grads_matches_mxnet():
    mod = module(update_freq=1)
    di = make_iter()
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label)
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in INIT.items()})
    mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.05),))
    mod.update_full_grads(di)
    for k in INIT:
        np.testing.assert_allclose(mod._param_dict[0][k].asnumpy(), GOLDEN[f"fullgrad/{k}"],
                                   rtol=1e-5, atol=1e-6)
    # the snapshot module holds the weights the full gradients were taken at
    snap, _ = mod._mod_aux.get_params()
    np.testing.assert_array_equal(snap['fc1_weight'].asnumpy(), INIT['fc1_weight'])


def test_svrg_gradient_rule():
    mod = module()
    g = [mx.nd.array([1.0, 2.0])]
    out = mod._svrg_grads_update_rule(g, [mx.nd.array([0.5, 0.5])], [mx.nd.array([2.0, 0.0])])
    assert out is g
    np.testing.assert_array_equal(g[0].asnumpy(), [2.5, 1.5])


def test_update_freq_errors():
    with pytest.raises(TypeError, match="must be an integer"):
        module(update_freq=None)
    with pytest.raises(TypeError, match="must be an integer"):
        module(update_freq=2.0)
    with pytest.raises(ValueError, match="must be a positive integer"):
        module(update_freq=0)
    with pytest.raises(AssertionError, match="please specify number of epochs"):
        module().fit(make_iter())


def test_optimizers_registered_and_dispatch():
    opt = mx.optimizer.create('_SVRGOptimizer', default_optimizer='sgd', learning_rate=1.0,
                              momentum=0.9, param_idx2name={0: 'w', 1: 'w_full'})
    assert isinstance(opt, svrg_optimizer._SVRGOptimizer)
    assert type(opt.default_opt).__name__ == 'SGD' and opt.default_opt.momentum == 0.9
    assert not hasattr(opt, 'momentum')  # only the base Optimizer's arguments stay on it
    assert isinstance(opt.aux_opt, svrg_optimizer._AssignmentOptimizer)
    w, g = mx.nd.ones((2,)), mx.nd.array([3.0, 4.0])
    opt.update('w_full', w, g, opt.create_state('w_full', w))  # a name: the assignment
    np.testing.assert_array_equal(w.asnumpy(), [3.0, 4.0])
    w = mx.nd.ones((2,))
    opt.update(0, w, g, opt.create_state(0, w))  # SGD: 1 - 1.0 * g
    np.testing.assert_allclose(w.asnumpy(), [-2.0, -3.0])
    with pytest.raises(KeyError):
        opt.update(7, w, g, None)


def test_not_imported_by_contrib():
    import neomx.contrib.svrg_optimization as svrg  # MXNet imports it only on request
    assert svrg.svrg_module.SVRGModule is SVRGModule
