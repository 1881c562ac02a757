"""One Monitor run written once for MXNet 1.9.1 (``tools/make_golden_monitor.py``) and neomx
(``tests/monitor/test_monitor.py``): ``run(mx)`` returns the rows of ``toc()`` and the lines
``toc_print()`` logged, for default and custom stat functions, patterns, sort and monitor_all,
on an executor and on a Module."""
import logging

import numpy as np


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _net(mx):
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
    act = mx.sym.Activation(fc, act_type="relu", name="relu1")
    return mx.sym.SoftmaxOutput(act, name="softmax")


def run(mx):
    out = {}
    ex = _net(mx).simple_bind(mx.cpu(), data=(2, 4))
    r = np.random.RandomState(0)
    for k in sorted(ex.arg_dict):
        ex.arg_dict[k][:] = r.uniform(-1, 1, ex.arg_dict[k].shape)
    ex.arg_dict["softmax_label"][:] = [0, 2]
    for ma in (False, True):
        mon = mx.mon.Monitor(1, pattern=".*", monitor_all=ma)
        mon.install(ex)
        mon.tic()
        ex.forward(is_train=True)
        ex.backward()
        out[f"rows_all{int(ma)}"] = [list(row) for row in mon.toc()]
    handler = _Lines()
    root = logging.getLogger()
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.INFO)
    try:
        mon = mx.mon.Monitor(2, stat_func=lambda x: [x.sum(), mx.nd.abs(x).max()],
                             pattern="fc.*", sort=True)
        mon.install(ex)
        for _ in range(3):
            mon.tic()
            ex.forward()
            mon.toc_print()
        mon = mx.mon.Monitor(1, stat_func=lambda x: mx.nd.abs(x).max(axis=0), pattern=".*weight")
        mon.install(ex)
        mon.tic()
        mon.toc_print()
        X = r.uniform(-1, 1, (6, 4)).astype(np.float32)
        Y = np.array([0, 1, 2, 0, 1, 2], np.float32)
        mod = mx.mod.Module(_net(mx), context=mx.cpu())
        it = mx.io.NDArrayIter(X, Y, batch_size=3)
        mod.bind(it.provide_data, it.provide_label)
        mod.init_params(arg_params={"fc1_weight": mx.nd.array(r.uniform(-1, 1, (3, 4))),
                                    "fc1_bias": mx.nd.zeros((3,))})
        mod.fit(it, num_epoch=1, optimizer_params={"learning_rate": 0.1},
                monitor=mx.mon.Monitor(1, pattern="fc1_(weight|output)", sort=True))
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    out["lines"] = [line for line in handler.lines if line.startswith("Batch:")]
    return out
