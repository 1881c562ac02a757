"""Module.fit end to end: LeNet on the embedded MNIST over two contexts, data parallelism giving
the same weights as one context, and resuming from a checkpoint."""
from __future__ import annotations

import numpy as np
import pytest

import neomx as mx

from ._helpers import as_numpy, assert_params_close, blobs, lenet, mlp

CTX2 = [mx.cpu(0), mx.cpu(1)]


@pytest.fixture(scope="module")
def mnist():
    return mx.test_utils.get_mnist()


def _iters(mnist, batch_size, n_train=None, shuffle=True):
    n = n_train or len(mnist["train_data"])
    train = mx.io.NDArrayIter(mnist["train_data"][:n], mnist["train_label"][:n], batch_size,
                              shuffle=shuffle, label_name="out_label")
    val = mx.io.NDArrayIter(mnist["test_data"], mnist["test_label"], batch_size,
                            label_name="out_label")
    return train, val


def test_lenet_fit_two_contexts_reaches_90_percent(mnist):
    np.random.seed(0)
    mx.random.seed(0)
    train, val = _iters(mnist, 100)
    mod = mx.mod.Module(lenet(), label_names=["out_label"], context=CTX2)
    mod.fit(train, eval_data=val, num_epoch=2, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
            initializer=mx.init.Xavier())
    assert mod._kvstore is not None and mod._update_on_kvstore
    [(name, acc)] = mod.score(val, "acc")
    assert name == "accuracy" and acc > 0.9


def _fit_lenet(mnist, contexts, seed=7):
    np.random.seed(seed)
    mx.random.seed(seed)
    train, _ = _iters(mnist, 50, n_train=200, shuffle=False)
    mod = mx.mod.Module(lenet(), label_names=["out_label"], context=contexts)
    mod.fit(train, num_epoch=1, optimizer_params={"learning_rate": 0.1, "momentum": 0.9,
                                                  "wd": 1e-4},
            initializer=mx.init.Xavier(magnitude=2.0))
    return as_numpy(mod.get_params()[0])


def test_lenet_two_contexts_equal_one_context(mnist):
    one = _fit_lenet(mnist, [mx.cpu(0)])
    two = _fit_lenet(mnist, CTX2)
    assert_params_close(one, two, rtol=1e-4, atol=1e-5)
    three = _fit_lenet(mnist, [mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    assert_params_close(one, three, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("contexts", [[mx.cpu(0)], CTX2], ids=["one_ctx", "two_ctx"])
def test_resume_from_checkpoint_gives_the_same_weights(tmp_path, contexts):
    x, y = blobs(48, seed=2)
    opt_params = {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-3}
    init = mx.init.Xavier()

    def run(mod, num_epoch, begin_epoch=0, callback=None):
        mx.random.seed(11)
        it = mx.io.NDArrayIter(x, y, batch_size=12)
        mod.fit(it, num_epoch=num_epoch, begin_epoch=begin_epoch, initializer=init,
                optimizer_params=opt_params, epoch_end_callback=callback)
        return as_numpy(mod.get_params()[0])

    prefix = str(tmp_path / "mlp")
    straight = mx.mod.Module(mlp(), context=contexts)
    expected = run(straight, 4, callback=mx.callback.module_checkpoint(
        straight, prefix, period=2, save_optimizer_states=True))

    resumed = mx.mod.Module.load(prefix, 2, load_optimizer_states=True, context=contexts)
    with pytest.warns(UserWarning, match="init_params call ignored"):  # loaded: initialised
        got = run(resumed, 4, begin_epoch=2)
    assert_params_close(got, expected, rtol=1e-6, atol=1e-7)
    final = mx.model.load_checkpoint(prefix, 4)[1]
    assert_params_close(as_numpy(final), expected, rtol=1e-6, atol=1e-7)

    # without the optimizer states the momentum restarts at zero: the weights differ
    fresh = mx.mod.Module.load(prefix, 2, context=contexts)
    with pytest.warns(UserWarning, match="init_params call ignored"):
        other = run(fresh, 4, begin_epoch=2)
    assert max(np.abs(other[k] - expected[k]).max() for k in expected) > 1e-4
