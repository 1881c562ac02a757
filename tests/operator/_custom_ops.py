"""Custom operators and the runs that use them, written once for MXNet 1.9.1 (the golden
generator ``tools/make_golden_custom_op.py``) and for neomx (``tests/operator/``): the same
Python custom-op code runs in both, so the records can be compared value for value.

``define(mx)`` registers the operators (names prefixed ``t_`` so they do not clash with other
tests); ``SCENARIOS`` maps a name to ``fn(mx) -> {key: value}`` (numpy arrays, lists, strings).
"""
import numpy as np

F32 = np.float32
_DEFINED = set()


def define(mx):
    """Register the test operators with ``mx.operator`` (once per module)."""
    if id(mx) in _DEFINED:
        return
    _DEFINED.add(id(mx))
    op = mx.operator

    class Softmax(op.CustomOp):
        """MXNet's example softmax loss: need_top_grad False, label input."""

        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0].asnumpy()
            y = np.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
            y /= y.sum(axis=1).reshape((x.shape[0], 1))
            self.assign(out_data[0], req[0], mx.nd.array(y))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            lab = in_data[1].asnumpy().ravel().astype(int)
            y = out_data[0].asnumpy()
            y[np.arange(lab.shape[0]), lab] -= 1.0
            self.assign(in_grad[0], req[0], mx.nd.array(y))
            self.assign(in_grad[1], req[1], 0)

    @op.register("t_softmax")
    class SoftmaxProp(op.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=False)

        def list_arguments(self):
            return ["data", "label"]

        def infer_shape(self, in_shape):
            return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Softmax()

    class WeightedLogistic(op.CustomOp):
        """MXNet's weighted logistic regression example (pos_grad_scale/neg_grad_scale)."""

        def __init__(self, pos_grad_scale, neg_grad_scale):
            self.pos_grad_scale = pos_grad_scale
            self.neg_grad_scale = neg_grad_scale

        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], mx.nd.divide(1, (1 + mx.nd.exp(-in_data[0]))))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            y = out_data[0]
            lab = in_data[1]
            g = (y - lab) * (lab * self.pos_grad_scale + (1 - lab) * self.neg_grad_scale)
            self.assign(in_grad[0], req[0], g / lab.shape[1])

    @op.register("t_weighted_logistic")
    class WeightedLogisticProp(op.CustomOpProp):
        def __init__(self, pos_grad_scale, neg_grad_scale):
            self.pos_grad_scale = float(pos_grad_scale)
            self.neg_grad_scale = float(neg_grad_scale)
            super().__init__(False)

        def list_arguments(self):
            return ["data", "label"]

        def infer_shape(self, in_shape):
            return [in_shape[0], in_shape[0]], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return WeightedLogistic(self.pos_grad_scale, self.neg_grad_scale)

    class ScaleSplit(op.CustomOp):
        """Two inputs, two outputs, a float parameter; state kept on self for backward."""

        def __init__(self, scale):
            self.scale = scale

        def forward(self, is_train, req, in_data, out_data, aux):
            a, b = in_data
            self.mask = (a > 0)
            self.assign(out_data[0], req[0], a * b * self.scale)
            self.assign(out_data[1], req[1], mx.nd.relu(a) + b)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            a, b = in_data
            g0, g1 = out_grad
            self.assign(in_grad[0], req[0], g0 * b * self.scale + g1 * self.mask)
            self.assign(in_grad[1], req[1], g0 * a * self.scale + g1)

    @op.register("t_scale_split")
    class ScaleSplitProp(op.CustomOpProp):
        def __init__(self, scale="1.0", **kwargs):
            super().__init__(need_top_grad=True)
            self.scale = float(scale)
            self.seen = dict(kwargs, scale=scale)
            SEEN_KWARGS.append(sorted((k, type(v).__name__, v) for k, v in self.seen.items()))

        def list_arguments(self):
            return ["a", "b"]

        def list_outputs(self):
            return ["prod", "mix"]

        def infer_shape(self, in_shape):
            return [in_shape[0], in_shape[0]], [in_shape[0], in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            CREATED.append([str(ctx), [list(s) for s in shapes], list(dtypes)])
            return ScaleSplit(self.scale)

    class RunningMean(op.CustomOp):
        """An auxiliary state updated in training forwards (momentum 0.5)."""

        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0]
            if is_train:
                aux[0][:] = aux[0] * 0.5 + x.mean(axis=0) * 0.5
            self.assign(out_data[0], req[0], mx.nd.broadcast_sub(x, aux[0].reshape((1, -1))))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0])

    @op.register("t_running_mean")
    class RunningMeanProp(op.CustomOpProp):
        def list_auxiliary_states(self):
            return ["mean"]

        def infer_shape(self, in_shape):
            return [in_shape[0]], [in_shape[0]], [(in_shape[0][1],)]

        def create_operator(self, ctx, shapes, dtypes):
            return RunningMean()

    class Square(op.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @op.register("t_square")
    class SquareProp(op.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Square()

    class ToInt(op.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], mx.nd.floor(in_data[0]).astype("int32"))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 0)

    @op.register("t_floor_int")
    class ToIntProp(op.CustomOpProp):
        def infer_type(self, in_type):
            return in_type, [np.int32], []

        def create_operator(self, ctx, shapes, dtypes):
            return ToInt()

    class Failing(op.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise ValueError("custom forward failed on purpose")

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            raise ValueError("custom backward failed on purpose")

    class FailingBackward(Square):
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            raise ValueError("custom backward failed on purpose")

    @op.register("t_failing")
    class FailingProp(op.CustomOpProp):
        def __init__(self, where="forward"):
            super().__init__()
            self.where = where

        def create_operator(self, ctx, shapes, dtypes):
            return Failing() if self.where == "forward" else FailingBackward()


SEEN_KWARGS = []
CREATED = []


def _x(seed, shape, lo=-1.0, hi=1.0):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(F32)


def softmax_executor(mx):
    define(mx)
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    net = mx.sym.Custom(fc, op_type="t_softmax", name="sm")
    ex = net.simple_bind(mx.cpu(), data=(4, 5))
    ex.arg_dict["data"][:] = _x(1, (4, 5))
    ex.arg_dict["fc_weight"][:] = _x(2, (3, 5))
    ex.arg_dict["fc_bias"][:] = _x(3, (3,))
    ex.arg_dict["sm_label"][:] = np.array([0, 2, 1, 2], F32)
    ex.forward(is_train=True)
    ex.backward()
    return {"arguments": net.list_arguments(), "outputs_names": net.list_outputs(),
            "shapes": [list(map(list, x)) for x in net.infer_shape(data=(4, 5))],
            "json": net.tojson(), "out": ex.outputs[0].asnumpy(),
            "g_w": ex.grad_dict["fc_weight"].asnumpy(), "g_b": ex.grad_dict["fc_bias"].asnumpy(),
            "g_data": ex.grad_dict["data"].asnumpy(), "g_label": ex.grad_dict["sm_label"].asnumpy()}


def scale_split_executor(mx):
    define(mx)
    del SEEN_KWARGS[:], CREATED[:]
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    net = mx.sym.Custom(a, b, op_type="t_scale_split", scale=2.5, flag=True, shape=(1, 2),
                        name="ss")
    ex = net.simple_bind(mx.cpu(), a=(2, 3), b=(2, 3), grad_req="add")
    ex.arg_dict["a"][:] = _x(4, (2, 3))
    ex.arg_dict["b"][:] = _x(5, (2, 3))
    heads = [mx.nd.array(_x(6, (2, 3))), mx.nd.array(_x(7, (2, 3)))]
    ex.forward(is_train=True)
    ex.backward(heads)
    ex.forward(is_train=True)
    ex.backward(heads)
    return {"outputs_names": net.list_outputs(), "json": net.tojson(),
            "prod": ex.outputs[0].asnumpy(), "mix": ex.outputs[1].asnumpy(),
            "g_a": ex.grad_dict["a"].asnumpy(), "g_b": ex.grad_dict["b"].asnumpy(),
            "kwargs": [list(map(list, k)) for k in SEEN_KWARGS[-1:]], "created": CREATED[-1:]}


def autograd_runs(mx):
    define(mx)
    a = mx.nd.array(_x(8, (3, 4)))
    b = mx.nd.array(_x(9, (3, 4)))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        p, m = mx.nd.Custom(a, b, op_type="t_scale_split", scale="-1.5")
        s = mx.nd.Custom(p, op_type="t_square")
        loss = (s * m).sum()
    loss.backward()
    x = mx.nd.array(_x(10, (4, 3)))
    lab = mx.nd.array(np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 0]], F32))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, lab, op_type="t_weighted_logistic", pos_grad_scale=0.8,
                         neg_grad_scale=0.2)
    y.backward()
    xi = mx.nd.array(_x(11, (2, 2), -3, 3))
    yi = mx.nd.Custom(xi, op_type="t_floor_int")
    return {"p": p.asnumpy(), "m": m.asnumpy(), "loss": loss.asnumpy(), "g_a": a.grad.asnumpy(),
            "g_b": b.grad.asnumpy(), "wl_out": y.asnumpy(), "wl_grad": x.grad.asnumpy(),
            "int_out": yi.asnumpy(), "int_dtype": str(yi.dtype.__name__ if hasattr(yi.dtype, "__name__") else yi.dtype),
            "f64": mx.nd.Custom(mx.nd.array(_x(12, (2, 2)), dtype="float64"),
                                op_type="t_square").asnumpy()}


def aux_state(mx):
    define(mx)
    net = mx.sym.Custom(mx.sym.Variable("data"), op_type="t_running_mean", name="rm")
    ex = net.simple_bind(mx.cpu(), data=(3, 2))
    ex.aux_dict["rm_mean"][:] = 0
    outs = []
    for k in range(3):
        ex.forward(is_train=True, data=_x(20 + k, (3, 2)))
        outs.append(ex.outputs[0].asnumpy())
    ex.forward(is_train=False, data=_x(30, (3, 2)))
    outs.append(ex.outputs[0].asnumpy())
    return {"aux_names": net.list_auxiliary_states(), "outs": np.stack(outs),
            "mean": ex.aux_dict["rm_mean"].asnumpy()}


def module_fit(mx):
    define(mx)
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    act = mx.sym.Activation(fc1, act_type="tanh", name="act")
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name="fc2")
    net = mx.sym.Custom(fc2, mx.sym.Variable("softmax_label"), op_type="t_softmax",
                        name="softmax")
    X = _x(40, (12, 4))
    Y = np.random.RandomState(41).randint(0, 3, (12,)).astype(F32)
    it = mx.io.NDArrayIter(X, Y, batch_size=4)
    mod = mx.mod.Module(net, context=mx.cpu())
    arg = {"fc1_weight": _x(42, (6, 4)), "fc1_bias": _x(43, (6,)),
           "fc2_weight": _x(44, (3, 6)), "fc2_bias": _x(45, (3,))}
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in arg.items()})
    mod.fit(it, num_epoch=2, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
            eval_metric="acc")
    arg_params, _ = mod.get_params()
    out = {k: v.asnumpy() for k, v in arg_params.items()}
    out["score"] = [list(x) for x in mod.score(it, "acc")]
    return out


def gluon_hybrid(mx):
    define(mx)
    nn = mx.gluon.nn

    class Net(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.dense = nn.Dense(3, in_units=4)

        def hybrid_forward(self, F, x, y):
            h = self.dense(x)
            p, m = F.Custom(h, y, op_type="t_scale_split", scale=0.5)
            return F.Custom(p + m, op_type="t_square")

    res = {}
    for hyb in (False, True):
        with mx.name.NameManager():
            net = Net(prefix="net_")
        net.initialize()
        net.dense.weight.set_data(mx.nd.array(_x(50, (3, 4))))
        net.dense.bias.set_data(mx.nd.array(_x(51, (3,))))
        if hyb:
            net.hybridize()
        x = mx.nd.array(_x(52, (2, 4)))
        y = mx.nd.array(_x(53, (2, 3)))
        x.attach_grad()
        for _ in range(2):  # (a hybridized block compiles on the first call)
            with mx.autograd.record():
                out = net(x, y)
            out.backward()
        key = "hybrid" if hyb else "imperative"
        res[key + "_out"] = out.asnumpy()
        res[key + "_gx"] = x.grad.asnumpy()
        res[key + "_gw"] = net.dense.weight.grad().asnumpy()
    return res


def errors(mx):
    define(mx)
    res = {}
    for where in ("forward", "backward"):
        x = mx.nd.ones((2, 2))
        x.attach_grad()
        try:
            with mx.autograd.record():
                y = mx.nd.Custom(x, op_type="t_failing", where=where)
            y.backward()
            x.grad.asnumpy()
            res[where] = "no error"
        except mx.base.MXNetError:
            res[where] = "MXNetError"
    net = mx.sym.Custom(mx.sym.Variable("data"), op_type="t_failing")
    ex = net.simple_bind(mx.cpu(), data=(2,))
    try:
        ex.forward()
        ex.outputs[0].asnumpy()
        res["executor"] = "no error"
    except mx.base.MXNetError:
        res["executor"] = "MXNetError"
    return res


SCENARIOS = {"softmax_executor": softmax_executor, "scale_split_executor": scale_split_executor,
             "autograd_runs": autograd_runs, "aux_state": aux_state, "module_fit": module_fit,
             "gluon_hybrid": gluon_hybrid, "errors": errors}
