"""SequentialModule, PythonModule and PythonLossModule against MXNet 1.9.1 (the same runs,
``_sequential.py``, recorded by ``tools/make_golden_module_seq.py``), and a BaseModule
subclass in the style of MXNet's stochastic-depth example."""
import json
from pathlib import Path

import numpy as np
import pytest

import neomx as mx

from . import _sequential

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "golden" / "module_seq" /
                     "records.json").read_text())


def _compare(got, want, where):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for k in want:
            _compare(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list) and want and all(isinstance(x, (int, float, list)) for x in want):
        try:
            w = np.asarray(want, dtype=np.float64)
        except ValueError:
            w = None
        if w is not None:
            np.testing.assert_allclose(np.asarray(got, dtype=np.float64), w, rtol=1e-5,
                                       atol=1e-6, err_msg=where)
            return
        for k, (g, x) in enumerate(zip(got, want)):
            _compare(g, x, f"{where}[{k}]")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for k, (g, x) in enumerate(zip(got, want)):
            _compare(g, x, f"{where}[{k}]")
    else:
        assert got == want, where


@pytest.mark.parametrize("name", sorted(_sequential.SCENARIOS))
def test_matches_mxnet(name):
    _compare(_sequential.SCENARIOS[name](mx), GOLDEN[name], name)


def test_add_checks_meta_and_resets_state():
    seq = mx.mod.SequentialModule()
    with pytest.raises(AssertionError, match="typo"):
        seq.add(mx.mod.PythonLossModule(), take_label=True)
    seq.binded = True
    seq.add(mx.mod.PythonLossModule())
    assert not seq.binded and seq.data_names == ["data"] and seq.output_names == ["pyloss_output"]


def test_duplicate_parameter_names_are_refused():
    def mod():
        net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
        return mx.mod.Module(net, label_names=None)
    seq = mx.mod.SequentialModule().add(mod()).add(mod(), auto_wiring=True)
    seq.bind([("data", (1, 2))], for_training=False)
    with pytest.raises(AssertionError, match="Duplicated parameter names"):
        seq.init_params()


class _RandomSkip(mx.mod.BaseModule):
    """A BaseModule subclass as MXNet's stochastic-depth example writes one: it wraps a Module
    and, on a coin flip, passes its input straight through (identity) instead."""

    def __init__(self, symbol, skip, **kwargs):
        super().__init__()
        self._mod = mx.mod.Module(symbol, label_names=None, **kwargs)
        self._skip = skip
        self._skipped = False

    data_names = property(lambda self: self._mod.data_names)
    output_names = property(lambda self: self._mod.output_names)
    data_shapes = property(lambda self: self._mod.data_shapes)
    label_shapes = property(lambda self: None)
    output_shapes = property(lambda self: self._mod.output_shapes)

    def get_params(self):
        return self._mod.get_params()

    def init_params(self, *args, **kwargs):
        self._mod.init_params(*args, **kwargs)
        self.params_initialized = True

    def bind(self, *args, **kwargs):
        self._mod.bind(*args, **kwargs)
        self.binded, self.for_training = True, self._mod.for_training
        self.inputs_need_grad = self._mod.inputs_need_grad

    def init_optimizer(self, *args, **kwargs):
        self._mod.init_optimizer(*args, **kwargs)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        self._skipped = self._skip()
        self._data = data_batch.data
        if not self._skipped:
            self._mod.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        self._grads = out_grads
        if not self._skipped:
            self._mod.backward(out_grads)

    def get_outputs(self, merge_multi_context=True):
        return self._data if self._skipped else self._mod.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._grads if self._skipped else self._mod.get_input_grads(merge_multi_context)

    def update(self):
        if not self._skipped:
            self._mod.update()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        pass

    def install_monitor(self, mon):
        self._mod.install_monitor(mon)


def test_base_module_subclass_in_a_sequential_fit():
    flips = iter([True, False] * 100)
    block = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4,
                                                    name="res_fc"), act_type="tanh")
    head = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2,
                                                      name="out_fc"), name="softmax")
    seq = mx.mod.SequentialModule()
    seq.add(_RandomSkip(block, lambda: next(flips)))
    seq.add(mx.mod.Module(head), take_labels=True, auto_wiring=True)
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (40, 4)).astype(np.float32)
    Y = (X[:, 0] > 0).astype(np.float32)
    it = mx.io.NDArrayIter(X, Y, batch_size=10)
    seq.fit(it, num_epoch=15, optimizer_params={"learning_rate": 0.5},
            initializer=mx.init.Xavier())
    assert seq.score(it, "acc")[0][1] > 0.8
