"""An LSTM language model with BucketingModule and BucketSentenceIter, in the style of MXNet's
example/rnn/bucketing/lstm_bucketing.py, on a small generated corpus (no downloads).

    .venv/bin/python examples/lstm_bucketing.py --num-epochs 2

Sentences of different lengths go to buckets; each bucket gets its own unrolled graph
(``sym_gen(seq_len)``) and all share one set of parameters. Prints the perplexity per epoch.
"""
import argparse
import logging
import random

import numpy as np

import neomx as mx


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--num-hidden", type=int, default=64)
    parser.add_argument("--num-embed", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=30)
    parser.add_argument("--sentences", type=int, default=800)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--disp-batches", type=int, default=10)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    random.seed(0)
    np.random.seed(0)
    mx.random.seed(0)

    buckets = [5, 10, 15, 20]
    start_label, invalid_label = 1, 0
    train_sent, vocab = mx.rnn.encode_sentences(
        make_corpus(args.sentences, args.vocab, 1), start_label=start_label,
        invalid_label=invalid_label)
    val_sent, _ = mx.rnn.encode_sentences(make_corpus(args.sentences // 4, args.vocab, 2),
                                          vocab=vocab, start_label=start_label,
                                          invalid_label=invalid_label)
    data_train = mx.rnn.BucketSentenceIter(train_sent, args.batch_size, buckets=buckets,
                                           invalid_label=invalid_label)
    data_val = mx.rnn.BucketSentenceIter(val_sent, args.batch_size, buckets=buckets,
                                         invalid_label=invalid_label)

    stack = mx.rnn.SequentialRNNCell()
    for i in range(args.num_layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=args.num_hidden, prefix="lstm_l%d_" % i))

    def zeros(name, shape, **kwargs):  # begin states with the batch size spelled out
        return mx.sym.zeros(shape=(args.batch_size,) + tuple(shape[1:]), **kwargs)

    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=len(vocab), output_dim=args.num_embed,
                                 name="embed")
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True,
                                  begin_state=stack.begin_state(func=zeros))
        pred = mx.sym.Reshape(outputs, shape=(-1, args.num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=len(vocab), name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax")
        return pred, ("data",), ("softmax_label",)

    model = mx.mod.BucketingModule(sym_gen=sym_gen,
                                   default_bucket_key=data_train.default_bucket_key,
                                   context=mx.cpu())
    model.fit(train_data=data_train, eval_data=data_val,
              eval_metric=mx.metric.Perplexity(invalid_label), kvstore="local",
              optimizer="adam", optimizer_params={"learning_rate": args.lr, "wd": 0.00001},
              initializer=mx.init.Xavier(factor_type="in", magnitude=2.34),
              num_epoch=args.num_epochs,
              batch_end_callback=mx.callback.Speedometer(args.batch_size, args.disp_batches,
                                                         auto_reset=False))


if __name__ == "__main__":
    main()
