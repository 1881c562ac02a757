"""An LSTM language model with BucketingModule and BucketSentenceIter, in the style of MXNet's
example/rnn/bucketing/lstm_bucketing.py, trained on English text that ships with Python itself
(the documentation topics of ``pydoc_data``: ~65,000 words, no downloads), or on a small
generated corpus (``--corpus generated``).

    .venv/bin/python examples/lstm_bucketing.py --num-epochs 2

Sentences of different lengths go to buckets; each bucket gets its own unrolled graph
(``sym_gen(seq_len)``) and all share one set of parameters. A progress bar follows the batches;
the perplexity is printed per epoch.
"""
import argparse
import logging
import random
import re

import numpy as np

import neomx as mx

try:
    from tqdm import tqdm
except ImportError:  # (the demo extra installs tqdm; without it there is no progress bar)
    tqdm = None


def python_docs_corpus(max_words_per_sentence=40):
    """Sentences (lists of lowercase words) of Python's own documentation topics."""
    from pydoc_data.topics import topics
    text = " ".join(topics[k] for k in sorted(topics))
    out = []
    for sent in re.split(r"[.!?\n]\s", text):
        words = re.findall(r"[a-z]+", sent.lower())
        if 3 <= len(words) <= max_words_per_sentence:
            out.append(words)
    return out


def limit_vocab(sentences, size):
    """The ``size - 1`` most frequent words; the others become ``<unk>``."""
    counts = {}
    for s in sentences:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    keep = set(sorted(counts, key=lambda w: (-counts[w], w))[:size - 1])
    return [[w if w in keep else "<unk>" for w in s] for s in sentences]


class ProgressBar:
    """A batch_end_callback drawing a tqdm bar per epoch (a no-op without tqdm)."""

    def __init__(self, total):
        self.total, self.bar, self.epoch = total, None, None

    def __call__(self, param):
        if tqdm is None:
            return
        if self.bar is None or param.epoch != self.epoch:
            if self.bar is not None:
                self.bar.close()
            self.epoch = param.epoch
            self.bar = tqdm(total=self.total, desc=f"epoch {param.epoch}", unit="batch",
                            leave=False)
        self.bar.update(1)
        if param.eval_metric is not None:
            name, value = param.eval_metric.get()
            self.bar.set_postfix({name: f"{value:.1f}"})


def make_corpus(n, vocab, seed):
    """Sentences of 4-20 words that follow a simple rule (each word determines the next two),
    so the model has something to learn."""
    rng = np.random.RandomState(seed)
    words = ["w%d" % i for i in range(vocab)]
    out = []
    for _ in range(n):
        w = rng.randint(vocab)
        sent = []
        for _ in range(rng.randint(4, 21)):
            sent.append(words[w])
            w = (w * 3 + rng.randint(2)) % vocab
        out.append(sent)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["python-docs", "generated"], default="python-docs")
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--num-hidden", type=int, default=64)
    parser.add_argument("--num-embed", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=1000,
                        help="vocabulary size (python-docs: the most frequent words)")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--disp-batches", type=int, default=50)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    random.seed(0)
    np.random.seed(0)
    mx.random.seed(0)

    if args.corpus == "python-docs":
        text = limit_vocab(python_docs_corpus(), args.vocab)
        rng = np.random.RandomState(0)
        order = rng.permutation(len(text))
        n_val = max(args.sentences // 4, 1)
        train_text = [text[i] for i in order[:args.sentences]]
        val_text = [text[i] for i in order[args.sentences:args.sentences + n_val]]
        buckets = [10, 20, 30, 40]
    else:
        train_text = make_corpus(args.sentences, args.vocab, 1)
        val_text = make_corpus(args.sentences // 4, args.vocab, 2)
        buckets = [5, 10, 15, 20]
    start_label, invalid_label = 1, 0
    train_sent, vocab = mx.rnn.encode_sentences(train_text, start_label=start_label,
                                                invalid_label=invalid_label)
    val_sent, _ = mx.rnn.encode_sentences(val_text, vocab=vocab, start_label=start_label,
                                          invalid_label=invalid_label, unknown_token="<unk>")
    data_train = mx.rnn.BucketSentenceIter(train_sent, args.batch_size, buckets=buckets,
                                           invalid_label=invalid_label)
    data_val = mx.rnn.BucketSentenceIter(val_sent, args.batch_size, buckets=buckets,
                                         invalid_label=invalid_label)

    stack = mx.rnn.SequentialRNNCell()
    for i in range(args.num_layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=args.num_hidden, prefix="lstm_l%d_" % i))

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=len(vocab), output_dim=args.num_embed,
                                 name="embed")
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True,
                                  begin_state=stack.begin_state())
        pred = mx.sym.Reshape(outputs, shape=(-1, args.num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=len(vocab), name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax")
        return pred, ("data",), ("softmax_label",)

    model = mx.mod.BucketingModule(sym_gen=sym_gen,
                                   default_bucket_key=data_train.default_bucket_key,
                                   context=mx.cpu())
    n_batches = sum(1 for _ in data_train)
    data_train.reset()
    print(f"{args.corpus}: {len(train_sent)} training and {len(val_sent)} validation sentences, "
          f"vocabulary {len(vocab)}, {n_batches} batches per epoch")
    model.fit(train_data=data_train, eval_data=data_val,
              eval_metric=mx.metric.Perplexity(invalid_label), kvstore="local",
              optimizer="adam", optimizer_params={"learning_rate": args.lr, "wd": 0.00001},
              initializer=mx.init.Xavier(factor_type="in", magnitude=2.34),
              num_epoch=args.num_epochs,
              batch_end_callback=[ProgressBar(n_batches),
                                  mx.callback.Speedometer(args.batch_size, args.disp_batches,
                                                          auto_reset=False)])
    (_, ppl), = model.score(data_val, mx.metric.Perplexity(invalid_label))
    print(f"validation perplexity {ppl:.1f}")
    return ppl


if __name__ == "__main__":
    main()
