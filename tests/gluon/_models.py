"""Gluon models built the same way by the golden generator (``mx`` = MXNet 1.9.1) and by the
tests (``mx`` = neomx): one source for both, so names and structure cannot drift apart.

Each builder takes the ``mx`` module and returns ``(net, input shapes)``; call it inside a fresh
``mx.name.NameManager()`` scope so automatic prefixes start from 0.
"""
import numpy as np


def custom_block(mx):
    nn = mx.gluon.nn

    class Net(mx.gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.dense0 = nn.Dense(5, in_units=4)
                self.seq = nn.HybridSequential()
                with self.seq.name_scope():
                    self.seq.add(nn.Dense(3, activation="relu"))
                    self.seq.add(nn.Dense(2))

        def forward(self, x):
            return self.seq(self.dense0(x))

    return Net(), [(3, 4)]


def hybrid_mlp(mx):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(8, activation="tanh"))
        net.add(nn.Dense(3))
    return net, [(4, 6)]


def scaled(mx):
    nn = mx.gluon.nn

    class Scaled(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.scale = self.params.get("scale", shape=(1,))
                self.body = nn.Dense(4, flatten=False)

        def hybrid_forward(self, F, x, y, scale):
            return F.broadcast_mul(self.body(x), scale) + y

    return Scaled(), [(2, 3, 5), (2, 3, 4)]


def no_scope(mx):
    nn = mx.gluon.nn

    class Outer(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.a = nn.Dense(3)  # created outside name_scope: global names
            self.b = nn.Dense(2, prefix="mine_")

        def hybrid_forward(self, F, x):
            return self.b(self.a(x))

    return Outer(), [(2, 5)]


def shared(mx):
    nn = mx.gluon.nn

    class Shared(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.first = nn.Dense(4, in_units=4)
                self.second = nn.Dense(4, in_units=4, params=self.first.params)

        def hybrid_forward(self, F, x):
            return self.second(F.relu(self.first(x)))

    return Shared(), [(3, 4)]


MODELS = {"custom_block": custom_block, "hybrid_mlp": hybrid_mlp, "scaled": scaled,
          "no_scope": no_scope, "shared": shared}


def values_for(name, shape):
    """Deterministic parameter/input values keyed by name."""
    import zlib
    r = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    return r.uniform(-1, 1, shape).astype(np.float32)


def run(mx, net, shapes, hybridize):
    """Initialize (deferred), set deterministic values, run forward/backward of
    sum(out * w); returns outputs, input gradients and parameter gradients (numpy)."""
    xs = [mx.nd.array(values_for(f"x{i}", s)) for i, s in enumerate(shapes)]
    net.initialize(mx.init.Uniform())
    if hybridize:
        net.hybridize()
    net(*xs)  # finishes deferred initialization
    for pname, p in sorted(net.collect_params().items()):
        p.set_data(mx.nd.array(values_for(pname, p.shape)))
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = net(*xs)
        w = mx.nd.array(values_for("head", out.shape))
        loss = (out * w).sum()
    loss.backward()
    grads = {k: p.grad().asnumpy() for k, p in net.collect_params().items()
             if p.grad_req != "null"}
    return out.asnumpy(), [x.grad.asnumpy() for x in xs], grads
