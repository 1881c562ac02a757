"""python -m neomx.convert on a checkpoint written by mx.model.save_checkpoint."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import convert

from . import _models


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    sym, args, aux, inputs = _models.lenet()
    prefix = str(tmp_path_factory.mktemp("ckpt") / "lenet")
    mx.model.save_checkpoint(prefix, 7, sym, args, aux)
    return prefix, _models.neomx_forward(sym, args, aux, inputs)[0], inputs["data"]


def test_to_onnx_command(checkpoint):
    ort = pytest.importorskip("onnxruntime")
    prefix, ref, x = checkpoint
    res = subprocess.run([sys.executable, "-m", "neomx.convert", prefix, "7", "--to", "onnx",
                          "--shape", "data=2,1,28,28"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"{prefix}-0007.onnx" in res.stdout
    sess = ort.InferenceSession(f"{prefix}-0007.onnx", providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"data": x})[0], ref, rtol=1e-4, atol=1e-5)


def test_to_torch(checkpoint, tmp_path, capsys):
    prefix, ref, x = checkpoint
    out = str(tmp_path / "lenet.pt2")
    assert convert.main([prefix, "7", "--to", "torch", "--shape", "data=2,1,28,28",
                         "--out", out]) == 0
    module = torch.export.load(out).module()
    np.testing.assert_allclose(module(torch.from_numpy(x)).detach().numpy(), ref, rtol=1e-4,
                               atol=1e-6)
    assert "conv1_weight" in module.state_dict()


def test_errors(checkpoint, tmp_path, capsys):
    prefix, _, _ = checkpoint
    assert convert.main([prefix, "7", "--to", "onnx", "--shape", "image=1,1,28,28"]) == 2
    assert "the model's data inputs are ['data']" in capsys.readouterr().err
    net = mx.sym.sort(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc"))
    bad = str(tmp_path / "bad")
    mx.model.save_checkpoint(bad, 1, net, {"fc_weight": mx.nd.ones((3, 2)),
                                           "fc_bias": mx.nd.zeros(3)}, {})
    for to in ("onnx", "torch"):
        assert convert.main([bad, "1", "--to", to, "--shape", "data=1,2"]) == 2
        assert "unsupported operators sort" in capsys.readouterr().err
