"""MXNet's legacy Python operators ``mx.operator.NumpyOp`` / ``NDArrayOp`` (MXNet 1.9.1).

MXNet 1.9.1's own NumpyOp and NDArrayOp crash (segfault) as soon as a graph holding one infers
shapes (their ``_Native``/``_NDArray`` C operators are broken in the 1.9.1 wheels), so the
oracle (``tools/make_golden_legacy_ops.py``) records what it can: the names of the legacy
symbols, and the values of the same networks built with the built-in operators the legacy ops
reimplement (MXNet's old ``example/numpy-ops`` softmax loss is ``SoftmaxOutput``; a squaring op
is ``square``). The tests run the legacy ops in neomx on the same inputs and compare: forward
outputs and gradients in an executor, and the parameters after a few ``Module.fit`` epochs.

The scenario code below is shared with the generator, so this module imports neomx only inside
the tests.
"""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "legacy_ops" / "records.json"
BATCH, IN_DIM, CLASSES = 4, 5, 3


def inputs():
    r = np.random.RandomState(7)
    return {
        "data": r.uniform(-1, 1, (8, IN_DIM)).astype(np.float32),
        "label": np.array([0, 1, 2, 1, 2, 0, 0, 1], dtype=np.float32),
        "fc_weight": r.uniform(-0.5, 0.5, (CLASSES, IN_DIM)).astype(np.float32),
        "fc_bias": r.uniform(-0.1, 0.1, (CLASSES,)).astype(np.float32),
        "head": r.uniform(-1, 1, (BATCH, CLASSES)).astype(np.float32),
    }


def make_ops(mx):
    """The legacy operators of MXNet's examples, on numpy arrays and on NDArrays."""

    class NumpySoftmax(mx.operator.NumpyOp):  # MXNet's example/numpy-ops/numpy_softmax.py
        def __init__(self):
            super(NumpySoftmax, self).__init__(False)

        def list_arguments(self):
            return ['data', 'label']

        def list_outputs(self):
            return ['output']

        def infer_shape(self, in_shape):
            data_shape = in_shape[0]
            label_shape = (in_shape[0][0],)
            output_shape = in_shape[0]
            return [data_shape, label_shape], [output_shape]

        def forward(self, in_data, out_data):
            x = in_data[0]
            y = out_data[0]
            y[:] = np.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
            y /= y.sum(axis=1).reshape((x.shape[0], 1))

        def backward(self, out_grad, in_data, out_data, in_grad):
            l = in_data[1]
            l = l.reshape((l.size,)).astype(np.int64)
            y = out_data[0]
            dx = in_grad[0]
            dx[:] = y
            dx[np.arange(l.shape[0]), l] -= 1.0

    class NDArraySoftmax(mx.operator.NDArrayOp):  # the same, on NDArrays
        def __init__(self):
            super(NDArraySoftmax, self).__init__(False)
            self.fwd_kernel = None

        def list_arguments(self):
            return ['data', 'label']

        def list_outputs(self):
            return ['output']

        def infer_shape(self, in_shape):
            return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]

        def forward(self, in_data, out_data):
            x = in_data[0]
            out_data[0][:] = mx.nd.softmax(x)

        def backward(self, out_grad, in_data, out_data, in_grad):
            y = out_data[0]
            in_grad[0][:] = y - mx.nd.one_hot(in_data[1], y.shape[1])

    class NumpySquare(mx.operator.NumpyOp):  # needs the head gradient
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] ** 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * in_data[0] * out_grad[0]

    class NDArraySquare(mx.operator.NDArrayOp):
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] * in_data[0]

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = 2 * in_data[0] * out_grad[0]

    return {"numpy_softmax": NumpySoftmax, "ndarray_softmax": NDArraySoftmax,
            "numpy_square": NumpySquare, "ndarray_square": NDArraySquare}


def loss_net(mx, head):
    """fc -> softmax loss; ``head(fc)`` makes the loss symbol named 'softmax'."""
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=CLASSES, name='fc')
    return head(fc)


def square_net(mx, head):
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=CLASSES, name='fc')
    return head(fc)


def run_executor(mx, net, with_label, head_grad):
    x = inputs()
    shapes = {"data": (BATCH, IN_DIM)}
    if with_label:
        shapes["softmax_label"] = (BATCH,)
    ex = net.simple_bind(mx.cpu(), **shapes)
    ex.arg_dict["data"][:] = x["data"][:BATCH]
    ex.arg_dict["fc_weight"][:] = x["fc_weight"]
    ex.arg_dict["fc_bias"][:] = x["fc_bias"]
    if with_label:
        ex.arg_dict["softmax_label"][:] = x["label"][:BATCH]
    ex.forward(is_train=True)
    out = ex.outputs[0].asnumpy()
    ex.backward([mx.nd.array(x["head"])] if head_grad else None)
    grads = {k: ex.grad_dict[k].asnumpy() for k in ("data", "fc_weight", "fc_bias")}
    return {"arguments": net.list_arguments(), "outputs": net.list_outputs(),
            "infer_shape": [list(map(list, s)) for s in net.infer_shape(**shapes)[:2]],
            "forward": out, "grads": grads}


def run_fit(mx, net):
    x = inputs()
    it = mx.io.NDArrayIter(x["data"], x["label"], batch_size=BATCH, label_name="softmax_label")
    mod = mx.mod.Module(net, data_names=("data",), label_names=("softmax_label",),
                        context=mx.cpu())
    mod.fit(it, num_epoch=3, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
            arg_params={"fc_weight": mx.nd.array(x["fc_weight"]),
                        "fc_bias": mx.nd.array(x["fc_bias"])})
    args, _ = mod.get_params()
    it.reset()
    pred = mod.predict(it).asnumpy()
    return {"params": {k: v.asnumpy() for k, v in args.items()}, "predict": pred}


def reference(mx):
    """What the oracle records: the built-in equivalents, and the legacy symbols' names."""
    softmax = lambda fc: mx.sym.SoftmaxOutput(fc, name='softmax')  # noqa: E731
    square = lambda fc: mx.sym.square(fc, name='square')  # noqa: E731
    rec = {"softmax": run_executor(mx, loss_net(mx, softmax), True, False),
           "square": run_executor(mx, square_net(mx, square), False, True),
           "fit": run_fit(mx, loss_net(mx, softmax))}
    for kind in ("arguments", "outputs", "infer_shape"):
        rec["square"].pop(kind)  # the built-in square names its own output differently
    rec["softmax"].pop("infer_shape")
    # The legacy symbols themselves (MXNet builds them; only shape inference crashes).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ops = make_ops(mx)
        names = {}
        for key, cls in ops.items():
            name = "softmax" if key.endswith("softmax") else "square"
            sym = cls()(data=mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=CLASSES,
                                                   name='fc'), name=name)
            names[key] = {"arguments": sym.list_arguments(), "outputs": sym.list_outputs()}
        base = mx.operator.PythonOp()
        shapes = [list(map(list, s)) for s in base.infer_shape([[2, 3]])]
        names["python_op"] = {"arguments": base.list_arguments(), "outputs": base.list_outputs(),
                              "need_top_grad": base.need_top_grad(), "infer_shape": shapes}
        nd_op = mx.operator.NDArrayOp(need_top_grad=False)
        names["ndarray_deps"] = {"no_top_grad": nd_op.declare_backward_dependency([1], [2, 3], [4]),
                                 "top_grad": mx.operator.NDArrayOp().declare_backward_dependency(
                                     [1], [2, 3], [4])}
    rec["names"] = names
    return rec


# ----------------------------------------------------------------------------- tests

@pytest.fixture(scope="module")
def mx():
    import neomx
    return neomx


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def ops(mx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield make_ops(mx)


def _close(got, want, where):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-5, atol=1e-6, err_msg=where)


def _legacy(cls, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op = cls()
    return lambda fc: op(data=fc, name=name)


@pytest.mark.parametrize("key", ["numpy_softmax", "ndarray_softmax"])
def test_softmax_loss_executor(mx, ops, golden, key):
    got = run_executor(mx, loss_net(mx, _legacy(ops[key], "softmax")), True, False)
    want = golden["softmax"]
    assert got["arguments"] == want["arguments"] == golden["names"][key]["arguments"]
    assert got["outputs"] == want["outputs"] == golden["names"][key]["outputs"]
    assert got["infer_shape"] == [[[4, 5], [3, 5], [3], [4]], [[4, 3]]]
    _close(got["forward"], want["forward"], "forward")
    for k in want["grads"]:
        _close(got["grads"][k], want["grads"][k], k)


@pytest.mark.parametrize("key", ["numpy_square", "ndarray_square"])
def test_square_with_head_gradient(mx, ops, golden, key):
    got = run_executor(mx, square_net(mx, _legacy(ops[key], "square")), False, True)
    assert got["arguments"] == golden["names"][key]["arguments"]
    assert got["outputs"] == golden["names"][key]["outputs"]
    _close(got["forward"], golden["square"]["forward"], "forward")
    for k, v in golden["square"]["grads"].items():
        _close(got["grads"][k], v, k)


@pytest.mark.parametrize("key", ["numpy_softmax", "ndarray_softmax"])
def test_module_fit(mx, ops, golden, key):
    got = run_fit(mx, loss_net(mx, _legacy(ops[key], "softmax")))
    for k, v in golden["fit"]["params"].items():
        _close(got["params"][k], v, k)
    _close(got["predict"], golden["fit"]["predict"], "predict")


def test_base_class_defaults(mx, golden):
    want = golden["names"]
    with pytest.warns(UserWarning, match="PythonOp has been deprecated"):
        base = mx.operator.PythonOp()
    assert base.list_arguments() == want["python_op"]["arguments"]
    assert base.list_outputs() == want["python_op"]["outputs"]
    assert base.need_top_grad() == want["python_op"]["need_top_grad"]
    shapes = [list(map(list, s)) for s in base.infer_shape([[2, 3]])]
    assert shapes == want["python_op"]["infer_shape"]
    with pytest.raises(NotImplementedError):
        base.get_symbol(mx.sym.Variable("x"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nd_op = mx.operator.NDArrayOp(need_top_grad=False)
        mx.operator.NumpyOp()
    assert [str(w.message) for w in caught] == [
        f"{k} has been deprecated. Please use CustomOp"
        for k in ("PythonOp", "NDArrayOp", "PythonOp", "NumpyOp")]
    deps = nd_op.declare_backward_dependency([1], [2, 3], [4])
    assert deps == want["ndarray_deps"]["no_top_grad"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nd_op = mx.operator.NDArrayOp()
    assert nd_op.declare_backward_dependency([1], [2, 3], [4]) == want["ndarray_deps"]["top_grad"]


def test_default_numpy_op_is_identity_with_unit_gradient(mx):
    """PythonOp's default forward copies the input; its default backward writes ones."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op = mx.operator.NumpyOp()
    x = mx.sym.Variable("x")
    ex = op(x, name="ident").simple_bind(mx.cpu(), x=(2, 3))
    ex.arg_dict["x"][:] = np.arange(6).reshape(2, 3)
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), np.arange(6).reshape(2, 3))
    ex.backward([mx.nd.ones((2, 3))])
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), np.ones((2, 3)))


def test_grad_req_add_accumulates(mx, ops):
    for key in ("numpy_square", "ndarray_square"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op = ops[key]()
        x = mx.sym.Variable("x")
        ex = op(x, name="sq").simple_bind(mx.cpu(), grad_req="add", x=(3,))
        ex.arg_dict["x"][:] = [1, 2, 3]
        for _ in range(2):
            ex.forward(is_train=True)
            ex.backward([mx.nd.ones((3,))])
        np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), [4, 8, 12], err_msg=key)
