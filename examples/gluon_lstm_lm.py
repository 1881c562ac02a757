"""A word-level LSTM language model in Gluon (in the style of MXNet's
example/gluon/word_language_model), trained on a small generated corpus (no downloads).

    .venv/bin/python examples/gluon_lstm_lm.py --epochs 3

``Embedding -> gluon.rnn.LSTM (fused RNN operator) -> Dense``, hybridized, trained by truncated
back-propagation through time (the hidden state carries over between batches, detached) with
``gluon.Trainer('adam')`` and gradient clipping. Prints the training and validation
perplexity per epoch; the corpus follows a simple rule, so the perplexity falls well below the
vocabulary size.
"""
import argparse
import math
import sys
import time

import numpy as np

import neomx as mx
from neomx import autograd, gluon
from neomx.gluon import nn, rnn


class RNNModel(gluon.HybridBlock):
    """Embedding, a multi-layer LSTM and a linear decoder over the vocabulary."""

    def __init__(self, vocab_size, num_embed, num_hidden, num_layers, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocab_size, num_embed,
                                        weight_initializer=mx.init.Uniform(0.1))
            self.rnn = rnn.LSTM(num_hidden, num_layers, dropout=dropout, input_size=num_embed)
            self.decoder = nn.Dense(vocab_size, in_units=num_hidden, flatten=False)

    def hybrid_forward(self, F, inputs, h, c):
        emb = self.drop(self.encoder(inputs))
        output, (h, c) = self.rnn(emb, [h, c])
        return self.decoder(self.drop(output)), h, c

    def begin_state(self, batch_size, ctx):
        return self.rnn.begin_state(batch_size=batch_size, ctx=ctx)


def make_corpus(n_words, vocab, seed):
    """Word ids where each word determines the next one up to a coin flip, with a sentence end
    (id 0) every 5-15 words."""
    rng = np.random.RandomState(seed)
    out, w, left = [], 1, rng.randint(5, 16)
    for _ in range(n_words):
        if left == 0:
            out.append(0)
            w, left = rng.randint(1, vocab), rng.randint(5, 16)
            continue
        out.append(w)
        w = 1 + (w * 3 + rng.randint(2)) % (vocab - 1)
        left -= 1
    return np.array(out, dtype=np.float32)


def batchify(ids, batch_size):
    """(T, N) columns of consecutive words, the layout the LSTM ('TNC') takes."""
    n = len(ids) // batch_size
    return ids[:n * batch_size].reshape(batch_size, n).T


def run_epoch(net, data, bptt, ctx, loss_fn, trainer=None, clip=0.25):
    """One pass over ``data`` (T, N); trains when ``trainer`` is given. Returns perplexity."""
    states = net.begin_state(data.shape[1], ctx)
    total, count = 0.0, 0
    for i in range(0, data.shape[0] - 1, bptt):
        seq = min(bptt, data.shape[0] - 1 - i)
        x = mx.nd.array(data[i:i + seq], ctx=ctx)
        y = mx.nd.array(data[i + 1:i + 1 + seq], ctx=ctx)
        states = [s.detach() for s in states]
        with autograd.record(train_mode=trainer is not None):
            out, h, c = net(x, *states)
            loss = loss_fn(out.reshape((-1, out.shape[-1])), y.reshape((-1,)))
        if trainer is not None:
            loss.backward()
            grads = [p.grad(ctx) for p in net.collect_params().values()
                     if p.grad_req != "null"]
            # the gradient of the summed per-word losses, clipped at clip per word
            gluon.utils.clip_global_norm(grads, clip * seq * data.shape[1])
            trainer.step(seq * data.shape[1])
        states = [h, c]
        total += float(loss.sum().asscalar())
        count += loss.size
    return math.exp(total / count)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--vocab", type=int, default=50)
    p.add_argument("--words", type=int, default=8000, help="training corpus length")
    p.add_argument("--emsize", type=int, default=32)
    p.add_argument("--nhid", type=int, default=64)
    p.add_argument("--nlayers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--bptt", type=int, default=35)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--ctx", default="cpu(0)", help="e.g. cpu(0) or gpu(0)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-val-ppl", type=float, default=None,
                   help="exit with status 1 when the last validation perplexity is above this")
    args = p.parse_args(argv)
    mx.random.seed(args.seed)
    np.random.seed(args.seed)
    ctx = mx.context.Context(args.ctx.split("(")[0], int(args.ctx.split("(")[1].rstrip(")")))

    train = batchify(make_corpus(args.words, args.vocab, args.seed + 1), args.batch_size)
    val = batchify(make_corpus(args.words // 5, args.vocab, args.seed + 2), args.batch_size)
    net = RNNModel(args.vocab, args.emsize, args.nhid, args.nlayers, args.dropout)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize(static_alloc=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": args.lr})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    print(f"corpus: {train.size} training words, vocabulary {args.vocab}; "
          f"LSTM {args.nlayers}x{args.nhid}, batch {args.batch_size}, bptt {args.bptt}")
    val_ppl = None
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        train_ppl = run_epoch(net, train, args.bptt, ctx, loss_fn, trainer, args.clip)
        val_ppl = run_epoch(net, val, args.bptt, ctx, loss_fn)
        print(f"epoch {epoch}: train perplexity {train_ppl:.2f}, validation perplexity "
              f"{val_ppl:.2f} ({time.perf_counter() - t0:.1f} s)")
    if args.max_val_ppl is not None and val_ppl > args.max_val_ppl:
        print(f"validation perplexity {val_ppl:.2f} > {args.max_val_ppl}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
