"""SequentialModule / PythonLossModule runs written once for MXNet 1.9.1
(``tools/make_golden_module_seq.py``) and neomx (``tests/module/test_sequential_module.py``)."""
import logging

import numpy as np

F32 = np.float32


def _x(seed, shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(F32)


def _arrays(mx, d):
    return {k: mx.nd.array(v) for k, v in d.items()}


def sequential_fit(mx):
    """Two Modules chained (the second takes labels, auto-wired), fit 2 epochs with SGD."""
    net1 = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=6, name="fc1")
    net1 = mx.sym.Activation(net1, act_type="relu", name="relu1")
    net2 = mx.sym.FullyConnected(mx.sym.Variable("data2"), num_hidden=3, name="fc2")
    net2 = mx.sym.SoftmaxOutput(net2, name="softmax")
    mod1 = mx.mod.Module(net1, label_names=None, context=mx.cpu(), logger=logging)
    mod2 = mx.mod.Module(net2, data_names=["data2"], context=mx.cpu(), logger=logging)
    seq = mx.mod.SequentialModule()
    seq.add(mod1).add(mod2, take_labels=True, auto_wiring=True)
    X, Y = _x(1, (12, 5)), np.random.RandomState(2).randint(0, 3, (12,)).astype(F32)
    it = mx.io.NDArrayIter(X, Y, batch_size=4)
    seq.bind(it.provide_data, it.provide_label)
    seq.init_params(arg_params=_arrays(mx, {"fc1_weight": _x(3, (6, 5)), "fc1_bias": _x(4, (6,)),
                                            "fc2_weight": _x(5, (3, 6)), "fc2_bias": _x(6, (3,))}))
    seq.fit(it, num_epoch=2, optimizer="sgd",
            optimizer_params={"learning_rate": 0.3, "momentum": 0.5})
    arg, aux = seq.get_params()
    out = {k: v.asnumpy() for k, v in arg.items()}
    out["score"] = [list(x) for x in seq.score(it, "acc")]
    out["output_shapes"] = [[n, list(s)] for n, s in _pairs(seq.output_shapes)]
    out["data_names"] = seq.data_names
    out["output_names"] = seq.output_names
    out["label_shapes"] = [[n, list(s)] for n, s in _pairs(seq.label_shapes)]
    it.reset()
    out["predict"] = seq.predict(it).asnumpy()
    return out


def python_loss(mx):
    """A Module under a PythonLossModule (squared error), forward/backward/update by hand,
    with input gradients through the chain."""
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None, context=mx.cpu())

    def grad(scores, labels):
        return (scores - labels.reshape(scores.shape)) * 2

    loss = mx.mod.PythonLossModule(grad_func=grad, label_names=("lab",))
    seq = mx.mod.SequentialModule().add(mod).add(loss, take_labels=True, auto_wiring=True)
    seq.bind([("data", (3, 4))], [("lab", (3, 2))], inputs_need_grad=True)
    seq.init_params(arg_params=_arrays(mx, {"fc_weight": _x(7, (2, 4)), "fc_bias": _x(8, (2,))}))
    seq.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    out = {}
    for step in range(3):
        batch = mx.io.DataBatch([mx.nd.array(_x(10 + step, (3, 4)))],
                                [mx.nd.array(_x(20 + step, (3, 2)))])
        seq.forward(batch, is_train=True)
        seq.backward()
        out[f"out{step}"] = seq.get_outputs()[0].asnumpy()
        out[f"ingrad{step}"] = mod.get_input_grads()[0].asnumpy()  # (MXNet's seq asserts)
        seq.update()
    out["w"] = seq.get_params()[0]["fc_weight"].asnumpy()
    out["loss_outputs"] = loss.output_names
    out["loss_output_shapes"] = [[n, list(s)] for n, s in _pairs(loss.output_shapes)]
    return out


def _pairs(shapes):
    return [(getattr(s, "name", None) or s[0], tuple(getattr(s, "shape", None) or s[1]))
            for s in shapes]


SCENARIOS = {"sequential_fit": sequential_fit, "python_loss": python_loss}
