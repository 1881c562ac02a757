"""``lstm-lm``: the issue's LSTM language model -- Embedding(vocab 2000, 200) -> 2-layer LSTM
(200 hidden, the fused RNN operator) -> Dense(vocab) -- trained by truncated BPTT, batch 32,
sequence 35, in Gluon hybridized (``static_alloc``) with ``Trainer('sgd')``,
``SoftmaxCrossEntropyLoss`` and ``clip_global_norm``; the hidden state carries over between
steps, detached. PyTorch eager runs the same model with ``nn.LSTM``, ``cross_entropy``,
``clip_grad_norm_`` and ``torch.optim.SGD``. Metric: seconds for the steps after a warm-up
(steps/s in the extras)."""
from __future__ import annotations

import time

import numpy as np

METRIC = ("time_s", "s", "20 steps, 2x200 LSTM, batch 32, seq 35, vocab 2000")
VOCAB, EMBED, HIDDEN, LAYERS, BATCH, SEQ = 2000, 200, 200, 2, 32, 35
LR, CLIP = 1.0, 0.25


def iters(cfg):
    return (3, 1) if cfg["quick"] else (20, 3)


def batches(seed, n=4):
    """``n`` (input, target) pairs of word ids, (SEQ, BATCH) each."""
    rng = np.random.RandomState(seed)
    ids = rng.randint(0, VOCAB, size=(n * SEQ + 1, BATCH)).astype(np.float32)
    return [(ids[i * SEQ:(i + 1) * SEQ], ids[i * SEQ + 1:(i + 1) * SEQ + 1]) for i in range(n)]


def _timed(loop, cfg, wait):
    steps, warmup = iters(cfg)
    loop(warmup)
    wait()
    t0 = time.perf_counter()
    loss = loop(steps)
    wait()
    dt = time.perf_counter() - t0
    return {"value": dt, "extra": {"steps": steps, "warmup": warmup, "steps_per_s": steps / dt,
                                   "ms_per_step": 1e3 * dt / steps, "last_loss": loss}}


def run_mx(mx, cfg):
    gluon, nn = mx.gluon, mx.gluon.nn

    class LM(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.encoder = nn.Embedding(VOCAB, EMBED)
                self.rnn = gluon.rnn.LSTM(HIDDEN, LAYERS, input_size=EMBED)
                self.decoder = nn.Dense(VOCAB, in_units=HIDDEN, flatten=False)

        def hybrid_forward(self, F, x, h, c):
            out, (h, c) = self.rnn(self.encoder(x), [h, c])
            return self.decoder(out), h, c

    data = [(mx.nd.array(x), mx.nd.array(y)) for x, y in batches(cfg["seed"])]
    net = LM()
    net.initialize(mx.init.Uniform(0.1))
    net.hybridize(static_alloc=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    state = {"s": net.rnn.begin_state(batch_size=BATCH)}

    def loop(n):
        loss = None
        for i in range(n):
            x, y = data[i % len(data)]
            h, c = [s.detach() for s in state["s"]]
            with mx.autograd.record():
                out, h, c = net(x, h, c)
                loss = loss_fn(out.reshape((-1, VOCAB)), y.reshape((-1,)))
            loss.backward()
            gluon.utils.clip_global_norm([p.grad() for p in params], CLIP * SEQ * BATCH)
            trainer.step(BATCH)
            state["s"] = [h, c]
        return float(loss.mean().asscalar())
    return _timed(loop, cfg, mx.nd.waitall)


def run_torch(torch, cfg):
    nn = torch.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(VOCAB, EMBED)
            self.rnn = nn.LSTM(EMBED, HIDDEN, LAYERS)
            self.decoder = nn.Linear(HIDDEN, VOCAB)

        def forward(self, x, state):
            out, state = self.rnn(self.encoder(x), state)
            return self.decoder(out), state

    data = [(torch.from_numpy(x).long(), torch.from_numpy(y).long())
            for x, y in batches(cfg["seed"])]
    model = LM()
    for p in model.parameters():
        nn.init.uniform_(p, -0.1, 0.1)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    state = {"s": (torch.zeros(LAYERS, BATCH, HIDDEN), torch.zeros(LAYERS, BATCH, HIDDEN))}

    def loop(n):
        loss = None
        for i in range(n):
            x, y = data[i % len(data)]
            s = tuple(t.detach() for t in state["s"])
            opt.zero_grad()
            out, s = model(x, s)
            loss = nn.functional.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), CLIP * SEQ)
            opt.step()
            state["s"] = s
        return float(loss.detach())
    return _timed(loop, cfg, lambda: None)
