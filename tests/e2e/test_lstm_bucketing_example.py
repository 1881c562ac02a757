"""examples/lstm_bucketing.py end to end: BucketingModule + BucketSentenceIter learn Python's own
documentation text (shipped with CPython) -- the validation perplexity falls far below the
vocabulary size -- and the generated corpus."""
import math

from examples import lstm_bucketing


def test_python_docs_corpus(capsys):
    ppl = lstm_bucketing.main(["--num-epochs", "2", "--sentences", "800"])
    out = capsys.readouterr().out
    assert "python-docs: 800 training and 200 validation sentences" in out
    vocab = int(out.split("vocabulary ")[1].split(",")[0])
    assert math.isfinite(ppl) and ppl < vocab / 1.5


def test_generated_corpus():
    ppl = lstm_bucketing.main(["--corpus", "generated", "--vocab", "30", "--sentences", "800",
                               "--num-epochs", "2"])
    assert ppl < 10
