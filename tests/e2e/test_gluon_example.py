"""examples/gluon_mnist.py end to end: Gluon LeNet hybridized on cpu(0)+cpu(1) with a Trainer,
exported, and the exported files scored by mx.mod.Module with the same accuracy (the example
exits non-zero when they differ or the accuracy is too low)."""
import json

from examples import gluon_mnist


def test_gluon_mnist_example(tmp_path, capsys):
    prefix = str(tmp_path / "lenet")
    assert gluon_mnist.main(["--epochs", "1", "--out", prefix, "--min-accuracy", "0.85"]) == 0
    out = capsys.readouterr().out
    assert "Module over the exported files" in out
    sym = json.loads((tmp_path / "lenet-symbol.json").read_text())
    ops = [n["op"] for n in sym["nodes"] if n["op"] != "null"]
    assert ops == ["Convolution", "Activation", "Pooling", "Convolution", "Activation",
                   "Pooling", "Flatten", "FullyConnected", "Activation", "FullyConnected"]
    assert (tmp_path / "lenet-0001.params").exists()
