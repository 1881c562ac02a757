"""The seed tutorial's perceptron section, end to end, as the tutorial asserts it."""
import numpy as np

import neomx as mx
from examples import mixed_programming


def test_perceptron_reaches_tutorial_accuracy(seed, capsys):
    net, _, acc = mixed_programming.train_mlp(iterations=100)
    out = capsys.readouterr().out
    assert "['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'out_label']" in out
    assert "iteration 90, accuracy" in out
    assert acc > 0.95


def test_example_main_runs(tmp_path, capsys):
    assert mixed_programming.main(["--iterations", "30", "--sections", "mlp", "--out-dir", str(tmp_path),
                     "--seed", "1"]) == 0
    assert (tmp_path / "toy_data.png").exists()
    assert "iteration 20, accuracy" in capsys.readouterr().out
