"""gluon.contrib.estimator against MXNet 1.9.1 (fixtures from tools/make_golden_estimator.py):
the same three fits (log lines modulo timings, checkpoint files and their arrays, final
parameters and metrics), plus the Estimator's argument checks and handler plumbing."""
import io
import json
import logging
import os
import re
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx.gluon.contrib import estimator as E

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "estimator")


@pytest.fixture(scope="module")
def golden():
    with open(os.path.join(GOLDEN, "estimator.json")) as f:
        cases = json.load(f)["cases"]
    return cases, dict(np.load(os.path.join(GOLDEN, "estimator.npz")))


def loaders(arr):
    gd = mx.gluon.data
    train = gd.DataLoader(gd.ArrayDataset(mx.nd.array(arr["x_train"]),
                                          mx.nd.array(arr["y_train"])), batch_size=4)
    val = gd.DataLoader(gd.ArrayDataset(mx.nd.array(arr["x_val"]),
                                        mx.nd.array(arr["y_val"])), batch_size=4)
    return train, val


def make_net(arr=None):
    net = mx.gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(4, activation="tanh", in_units=3))
        net.add(mx.gluon.nn.Dense(3, in_units=4))
    net.initialize(ctx=mx.cpu())
    if arr is not None:
        for name, p in net.collect_params().items():
            p.set_data(mx.nd.array(arr[f"init/{name}"]))
    return net


def make_estimator(arr, hybridize=False):
    net = make_net(arr)
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.1, "momentum": 0.9})
    est = E.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                      context=mx.cpu())
    log = io.StringIO()
    est.logger.handlers[:] = [logging.StreamHandler(log)]  # keep pytest's stdout quiet
    return est, log


def masked_lines(text, folder):
    if folder:
        text = text.replace(folder, "<dir>")
    text = re.sub(r"\d+\.\d{3}s", "T.TTTs", text)
    text = re.sub(r"total \d+s", "total Ts", text)
    return text.splitlines()


def check_case(golden, cid, est, logs, folder):
    cases, arr = golden
    want = cases[cid]
    assert [line for text in logs for line in masked_lines(text, folder)] == want["logs"]
    files = sorted(os.listdir(folder)) if folder else []
    assert files == want["files"]
    for fname in files:
        if fname.endswith(".params"):
            got = mx.nd.load(os.path.join(folder, fname))
            prefix = f"{cid}/file/{fname}/"
            keys = sorted(k[len(prefix):] for k in arr if k.startswith(prefix))
            assert sorted(got) == keys
            for k in keys:
                np.testing.assert_allclose(got[k].asnumpy(), arr[prefix + k],
                                           rtol=1e-5, atol=1e-6)
    for name, p in est.net.collect_params().items():
        np.testing.assert_allclose(p.data().asnumpy(), arr[f"{cid}/final/{name}"],
                                   rtol=1e-5, atol=1e-6)
    for metrics, key in ((est.train_metrics, "train_metrics"), (est.val_metrics, "val_metrics")):
        got = [m.get() for m in metrics]
        assert [n for n, _ in got] == [n for n, _ in want[key]]
        np.testing.assert_allclose([v for _, v in got], [v for _, v in want[key]], rtol=1e-5)
    return want


def test_fit_epochs_logging_checkpoint_best(golden, tmp_path):
    _, arr = golden
    folder = str(tmp_path / "epochs")
    est, log = make_estimator(arr, hybridize=True)
    train, val = loaders(arr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handlers = [E.LoggingHandler(log_interval=2, metrics=est.train_metrics),
                    E.CheckpointHandler(folder, model_prefix="model", monitor=est.val_metrics[0],
                                        verbose=1, save_best=True, max_checkpoints=2)]
    est.fit(train, val_data=val, epochs=3, event_handlers=handlers)
    est.evaluate(val)
    want = check_case(golden, "epochs", est, [log.getvalue()], folder)
    with open(os.path.join(folder, "model-symbol.json")) as f:
        got_sym = json.load(f)
    want_sym = json.loads(want["symbol"])
    assert [n["name"] for n in got_sym["nodes"]] == [n["name"] for n in want_sym["nodes"]]
    assert [n["op"] for n in got_sym["nodes"]] == [n["op"] for n in want_sym["nodes"]]


def test_fit_batches_checkpoint_resume(golden, tmp_path):
    _, arr = golden
    folder = str(tmp_path / "batches")
    est, log = make_estimator(arr)
    train, _ = loaders(arr)
    est.fit(train, batches=5, event_handlers=[
        E.CheckpointHandler(folder, batch_period=2, epoch_period=None)])
    first = log.getvalue()
    est, log = make_estimator(arr)
    est.fit(train, batches=7, event_handlers=[
        E.CheckpointHandler(folder, batch_period=2, epoch_period=None,
                            resume_from_checkpoint=True)])
    check_case(golden, "batches", est, [first, log.getvalue()], folder)


def test_early_stopping(golden):
    _, arr = golden
    est, log = make_estimator(arr)
    train, _ = loaders(arr)
    with pytest.warns(UserWarning, match="`greater` operator"):
        E.EarlyStoppingHandler(est.train_metrics[1])  # 'auto' is always 'max' in MXNet 1.9.1
    est.fit(train, epochs=5, event_handlers=[
        E.EarlyStoppingHandler(est.train_metrics[1], mode="max")])
    check_case(golden, "early", est, [log.getvalue()], None)


# ----------------------------------------------------------------------------- unit

def _simple(**kwargs):
    net = make_net()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    est = E.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                      context=mx.cpu(), **kwargs)
    est.logger.handlers[:] = []
    return est


def _data(n=8, batch=4):
    r = np.random.RandomState(0)
    ds = mx.gluon.data.ArrayDataset(mx.nd.array(r.uniform(-1, 1, (n, 3))),
                                    mx.nd.array(r.randint(0, 3, (n,))))
    return mx.gluon.data.DataLoader(ds, batch_size=batch)


def test_default_metrics_and_names():
    est = _simple()
    assert [m.name for m in est.train_metrics] == ["training accuracy",
                                                  "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy",
                                                "validation softmaxcrossentropyloss"]
    assert est.val_net is est.net and est.val_loss is est.loss
    assert isinstance(est.batch_processor, E.BatchProcessor)
    est2 = _simple(train_metrics=mx.metric.CompositeEvalMetric(["mse", "mae"]))
    assert [m.name for m in est2.train_metrics] == ["training mse", "training mae"]
    assert [m.name for m in est2.val_metrics] == ["validation mse", "validation mae"]
    net = make_net()
    with pytest.warns(UserWarning, match="default SGD optimizer"):
        est3 = E.Estimator(net, mx.gluon.loss.L2Loss(), context=mx.cpu())
    assert [m.name for m in est3.train_metrics] == ["training l2loss"]
    assert est3.trainer.learning_rate == 0.001


def test_argument_errors():
    net = make_net()
    loss = mx.gluon.loss.L2Loss()
    with pytest.raises(ValueError, match="loss must be a Loss"):
        E.Estimator(net, "l2")
    with pytest.raises(ValueError, match="metrics must be a Metric"):
        E.Estimator(net, loss, train_metrics=["acc"])
    with pytest.raises(ValueError, match="context must be a Context"):
        E.Estimator(net, loss, context="cpu")
    with pytest.raises(ValueError, match="Trainer must be a Gluon Trainer"):
        E.Estimator(net, loss, trainer="sgd", context=mx.cpu())
    with pytest.raises(ValueError, match="Customized Batch Processor"):
        E.Estimator(net, loss, trainer=mx.gluon.Trainer(net.collect_params(), "sgd"),
                    context=mx.cpu(), batch_processor=object())
    est = _simple()
    with pytest.raises(ValueError, match="only support input as Gluon DataLoader"):
        est.fit([(mx.nd.ones((2, 3)), mx.nd.ones((2,)))], epochs=1)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(_data(), epochs=1, batches=1)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(_data())
    with pytest.raises(ValueError, match="handlers must be an EventHandler"):
        est.fit(_data(), epochs=1, event_handlers=[object()])
    with pytest.raises(ValueError, match="outside of the known training"):
        est.fit(_data(), epochs=1,
                event_handlers=[E.MetricHandler(metrics=[mx.metric.Accuracy()])])
    with pytest.raises(ValueError, match="log_interval must be"):
        E.LoggingHandler(log_interval="batch")
    with pytest.raises(ValueError, match="CompositeEvalMetric is not supported"):
        E.EarlyStoppingHandler(mx.metric.CompositeEvalMetric(["acc"]))


def test_initializer_and_uninitialized_net():
    net = mx.gluon.nn.Dense(2, in_units=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = E.Estimator(net, mx.gluon.loss.L2Loss(), initializer=mx.init.Constant(0.5),
                          context=mx.cpu())
    assert (net.weight.data().asnumpy() == 0.5).all()
    with pytest.warns(UserWarning, match="already fully initialized"):
        E.Estimator(net, mx.gluon.loss.L2Loss(), initializer=mx.init.One(),
                    trainer=est.trainer, context=mx.cpu())
    assert (net.weight.data().asnumpy() == 0.5).all()


class _CountingProcessor(E.BatchProcessor):
    def __init__(self):
        super().__init__()
        self.fits = self.evals = 0

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        self.fits += 1
        return super().fit_batch(estimator, train_batch, batch_axis)

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        self.evals += 1
        return super().evaluate_batch(estimator, val_batch, batch_axis)


class _Recorder(E.TrainBegin, E.TrainEnd, E.EpochBegin, E.EpochEnd, E.BatchBegin, E.BatchEnd):
    def __init__(self):
        self.events = []

    def train_begin(self, estimator, *args, **kwargs):
        self.events.append("train_begin")

    def train_end(self, estimator, *args, **kwargs):
        self.events.append("train_end")

    def epoch_begin(self, estimator, *args, **kwargs):
        self.events.append("epoch_begin")

    def epoch_end(self, estimator, *args, **kwargs):
        self.events.append("epoch_end")

    def batch_begin(self, estimator, *args, **kwargs):
        self.events.append("batch_begin")

    def batch_end(self, estimator, *args, **kwargs):
        assert set(kwargs) == {"batch", "pred", "label", "loss"}
        self.events.append("batch_end")


def test_batch_processor_events_and_validation_period():
    proc = _CountingProcessor()
    est = _simple(batch_processor=proc)
    rec = _Recorder()
    val_runs = []
    vh = E.ValidationHandler(_data(), eval_fn=lambda **kw: val_runs.append(sorted(kw)),
                             epoch_period=None, batch_period=3)
    est.fit(_data(12), epochs=2, event_handlers=[rec, vh])
    assert proc.fits == 6 and proc.evals == 0
    assert val_runs == [["batch_axis", "event_handlers", "val_data"]] * 2
    assert rec.events == (["train_begin"] + (["epoch_begin"] + ["batch_begin", "batch_end"] * 3
                                             + ["epoch_end"]) * 2 + ["train_end"])
    est.evaluate(_data())
    assert proc.evals == 2
    rec = _Recorder()
    est.fit(_data(12), batches=4, event_handlers=[rec])
    assert rec.events.count("batch_end") == 4 and rec.events.count("epoch_end") == 2


def test_gradient_update_and_two_contexts():
    """Two contexts: the batch is split and the step uses the summed batch size."""
    arr = {f"init/{n}": np.full(p.shape, 0.1, np.float32)
           for n, p in make_net().collect_params().items()}
    results = []
    for ctx in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        net = make_net()
        net.collect_params().reset_ctx(ctx)
        for name, p in net.collect_params().items():
            p.set_data(mx.nd.array(arr[f"init/{name}"]))
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        est = E.Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                          context=ctx)
        est.logger.handlers[:] = []
        est.fit(_data(8), epochs=1)
        results.append({n: p.data(ctx[0]).asnumpy() for n, p in net.collect_params().items()})
    for name in results[0]:
        np.testing.assert_allclose(results[0][name], results[1][name], rtol=1e-5, atol=1e-6)


def test_checkpoint_symbol_message_and_max_checkpoints(tmp_path):
    est = _simple()
    log = io.StringIO()
    est.logger.handlers[:] = [logging.StreamHandler(log)]
    folder = str(tmp_path / "ck")
    est.fit(_data(8), epochs=4, event_handlers=[
        E.CheckpointHandler(folder, model_prefix="m", max_checkpoints=1)])
    assert sorted(os.listdir(folder)) == ["m-epoch3batch8.params", "m-epoch3batch8.states"]
    assert "Model architecture(symbol file) is not saved" in log.getvalue()
    with pytest.raises(ValueError, match="To save best model only"):
        E.CheckpointHandler(folder, save_best=True)
    est2 = _simple()
    with pytest.raises(ValueError, match="maximum number of epoch 4 reached"):
        est2.fit(_data(8), epochs=4, event_handlers=[
            E.CheckpointHandler(folder, model_prefix="m", resume_from_checkpoint=True)])


def test_public_names():
    names = {"BatchBegin", "BatchEnd", "BatchProcessor", "CheckpointHandler",
             "EarlyStoppingHandler", "EpochBegin", "EpochEnd", "Estimator",
             "GradientUpdateHandler", "LoggingHandler", "MetricHandler", "StoppingHandler",
             "TrainBegin", "TrainEnd", "ValidationHandler", "batch_processor", "estimator",
             "event_handler"}
    assert names <= set(dir(mx.gluon.contrib.estimator))
    assert mx.gluon.contrib.estimator.Estimator.logger is None


# ----------------------------------------------------------------------------- gluon.contrib.cnn
# (the deformable convolution layers; fixtures cnn_layers.* from the same generator)

@pytest.fixture(scope="module")
def cnn_golden():
    with open(os.path.join(GOLDEN, "cnn_layers.json")) as f:
        cases = json.load(f)["cases"]
    return cases, dict(np.load(os.path.join(GOLDEN, "cnn_layers.npz")))


CNN_IDS = ["deform", "deform_groups", "modulated", "modulated_nobias"]


def _cnn_layer(cid, case, arr):
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    layer = getattr(mx.gluon.contrib.cnn, case["cls"])(prefix=cid + "_", **kwargs)
    before = [[n, list(p.shape)] for n, p in layer.collect_params().items()]
    text = repr(layer)
    layer.initialize()
    layer(mx.nd.array(arr[f"{cid}/x"]))
    for name, p in layer.collect_params().items():
        p.set_data(mx.nd.array(arr[f"{cid}/init/{name}"]))
    return layer, before, text


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("cid", CNN_IDS)
def test_cnn_layer_matches_mxnet(cnn_golden, cid, hybridize):
    cases, arr = cnn_golden
    case = cases[cid]
    layer, before, text = _cnn_layer(cid, case, arr)
    assert before == case["params_before"]
    assert text == case["repr"]
    assert [[n, list(p.shape)] for n, p in layer.collect_params().items()] == \
        case["params_after"]
    layer.hybridize(hybridize)
    x = mx.nd.array(arr[f"{cid}/x"])
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
        loss = (y * mx.nd.array(arr[f"{cid}/head"])).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), arr[f"{cid}/y"], rtol=1e-4, atol=1e-5)
    if case["grad_error"] is None:
        np.testing.assert_allclose(x.grad.asnumpy(), arr[f"{cid}/grad/x"], rtol=1e-4, atol=1e-4)
        for name, p in layer.collect_params().items():
            np.testing.assert_allclose(p.grad().asnumpy(), arr[f"{cid}/grad/{name}"],
                                       rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cid", ["modulated", "modulated_nobias"])
def test_modulated_gradient_numeric(cnn_golden, cid):
    """MXNet's CPU build has no backward for the modulated layer: check the input gradient
    against central differences in a random direction instead."""
    cases, arr = cnn_golden
    layer, _, _ = _cnn_layer(cid, cases[cid], arr)
    head = mx.nd.array(arr[f"{cid}/head"])
    x0 = arr[f"{cid}/x"].astype(np.float64)
    x = mx.nd.array(x0)
    x.attach_grad()
    with mx.autograd.record():
        loss = (layer(x) * head).sum()
    loss.backward()
    t = np.random.RandomState(1).uniform(-1, 1, x0.shape)
    eps = 1e-3

    def f(v):
        return float((layer(mx.nd.array(v)) * head).sum().asscalar())
    numeric = (f(x0 + eps * t) - f(x0 - eps * t)) / (2 * eps)
    analytic = float((x.grad.asnumpy() * t).sum())
    assert abs(numeric - analytic) <= 2e-2 * max(1.0, abs(analytic))
