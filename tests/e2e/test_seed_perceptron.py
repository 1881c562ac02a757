"""The seed tutorial's perceptron section, end to end, as the tutorial asserts it."""
import importlib.util
import pathlib

import numpy as np

import neomx as mx

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mixed_programming.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("mixed_programming", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_perceptron_reaches_tutorial_accuracy(seed, capsys):
    mod = _load_example()
    net, _, acc = mod.train_mlp(iterations=100)
    out = capsys.readouterr().out
    assert "['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'out_label']" in out
    assert "iteration 90, accuracy" in out
    assert acc > 0.95


def test_example_main_runs(tmp_path, capsys):
    mod = _load_example()
    assert mod.main(["--iterations", "30", "--sections", "mlp", "--out-dir", str(tmp_path),
                     "--seed", "1"]) == 0
    assert (tmp_path / "toy_data.png").exists()
    assert "iteration 20, accuracy" in capsys.readouterr().out
