"""The seed tutorial's LeNet section on the embedded MNIST digits."""
import numpy as np
import pytest

import neomx as mx
from examples import mixed_programming


@pytest.fixture(scope="module")
def example():
    """The seed tutorial, examples/mixed_programming.py."""
    return mixed_programming


def test_lenet_symbol_matches_tutorial(example):
    with mx.name.NameManager():
        net = example.lenet()
    assert net.list_arguments() == [
        "data", "convolution0_weight", "convolution0_bias", "convolution1_weight",
        "convolution1_bias", "fullyconnected0_weight", "fullyconnected0_bias",
        "fullyconnected1_weight", "fullyconnected1_bias", "out_label"]
    arg_shapes, out_shapes, _ = net.infer_shape(data=(128, 1, 28, 28))
    assert arg_shapes[1] == (20, 1, 5, 5) and arg_shapes[3] == (50, 20, 5, 5)
    assert arg_shapes[5] == (500, 800) and out_shapes == [(128, 10)]
    dot = mx.viz.plot_network(net, shape={"data": (128, 1, 28, 28)})
    assert 'label="Convolution\n5x5/1, 20"' in dot.source  # MXNet's label, a real newline
    assert 'label="Pooling\nmax, 2x2/2x2"' in dot.source


def _lenet_weights(example, devs, power, iterations=2, batch=64):
    np.random.seed(3)
    mx.random.seed(3)
    mnist = example.MNIST()
    exs = []
    example.train(example.lenet(), [batch, 1, 28, 28], lambda: mnist.get(batch), devs, power,
                  iterations=iterations, verbose=False, executors=exs)
    return [a.asnumpy() for a in exs[0].arg_arrays]


def test_lenet_two_contexts_match_one(example):
    one = _lenet_weights(example, [mx.cpu(0)], [1])
    two = _lenet_weights(example, [mx.cpu(0), mx.cpu(1)], [1, 1])
    for k, (a, b) in enumerate(zip(one[1:-1], two[1:-1])):  # parameters (data/label differ)
        # raw 0-255 pixels make gradients large: summing them in two parts moves the last bits
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=2e-4, err_msg=f"argument {k + 1}")


@pytest.mark.slow
def test_lenet_reaches_tutorial_accuracy(example, capsys):
    """As the tutorial asserts: > 0.8 within 50 iterations of batch 1024."""
    np.random.seed(0)
    mx.random.seed(0)
    mnist = example.MNIST()
    batch_size = 1024
    acc = example.train(example.lenet(), [batch_size, 1, 28, 28], lambda: mnist.get(batch_size),
                        [mx.cpu()], [1], iterations=50)
    assert acc > 0.8
    assert "iteration 40, accuracy" in capsys.readouterr().out
