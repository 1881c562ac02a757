"""The seed tutorial's multi-device ``train``: two CPU contexts give the same result as one."""
import numpy as np
import pytest

import neomx as mx
from examples import mixed_programming


@pytest.fixture(scope="module")
def example():
    """The seed tutorial, examples/mixed_programming.py."""
    return mixed_programming


def _run(example, devs, power, iterations=20):
    np.random.seed(7)
    mx.random.seed(7)
    toy = example.ToyData(10, 100)
    exs = []
    acc = example.train(example.build_mlp(), [100, 100], lambda: toy.get(100), devs, power,
                        iterations=iterations, verbose=False, executors=exs)
    return acc, {k: v.asnumpy() for k, v in exs[0].arg_dict.items() if "weight" in k or "bias" in k}


def test_two_cpu_contexts_match_one(example, capsys):
    acc1, w1 = _run(example, [mx.cpu(0)], [1])
    acc2, w2 = _run(example, [mx.cpu(0), mx.cpu(1)], [1, 5])
    for name in w1:
        np.testing.assert_allclose(w2[name], w1[name], rtol=1e-4, atol=1e-5, err_msg=name)
    assert acc2 == pytest.approx(acc1)


def test_workload_partition_printout(example, capsys):
    np.random.seed(0)
    toy = example.ToyData(10, 100)
    acc = example.train(example.build_mlp(), [100, 100], lambda: toy.get(100),
                        [mx.cpu(0), mx.cpu(1)], [1, 5], iterations=50)
    out = capsys.readouterr().out
    assert "workload partition:  [(cpu(0), 17), (cpu(1), 83)]" in out
    assert "iteration 40, accuracy" in out
    assert acc > 0.95


@pytest.mark.gpu
def test_cpu_and_gpu_match_cpu(example):
    acc1, w1 = _run(example, [mx.cpu(0)], [1])
    acc2, w2 = _run(example, [mx.cpu(0), mx.gpu(0)], [1, 5])
    for name in w1:
        np.testing.assert_allclose(w2[name], w1[name], rtol=1e-3, atol=1e-4, err_msg=name)
