"""examples/gluon_lstm_lm.py end to end: the hybridized Gluon LSTM language model learns its
generated corpus (validation perplexity far below the vocabulary size of 50; the example
exits non-zero above --max-val-ppl)."""
import re

from examples import gluon_lstm_lm


def test_gluon_lstm_lm_example(capsys):
    assert gluon_lstm_lm.main(["--epochs", "3", "--max-val-ppl", "15"]) == 0
    out = capsys.readouterr().out
    ppl = [float(v) for v in re.findall(r"validation perplexity ([\d.]+)", out)]
    assert len(ppl) == 3 and ppl[-1] < ppl[0]
