"""``mx.model.save_checkpoint``/``load_checkpoint``/``load_params`` against MXNet 1.9.1's files."""
from __future__ import annotations

import json
import logging
import os

import numpy as np
import pytest

import neomx as mx

from ._helpers import GOLDEN_DIR, MANIFEST, assert_matches, golden_bytes, make_array

CKPT = MANIFEST["checkpoint"]
PREFIX = str(GOLDEN_DIR / CKPT["prefix"])


def _golden_params(ctx=None):
    args = {k: make_array(d) for k, d in CKPT["arg_params"].items()}
    auxs = {k: make_array(d) for k, d in CKPT["aux_params"].items()}
    if ctx is not None:
        args = {k: v.as_in_context(ctx) for k, v in args.items()}
        auxs = {k: v.as_in_context(ctx) for k, v in auxs.items()}
    return args, auxs


def test_load_checkpoint_written_by_mxnet():
    sym, args, auxs = mx.model.load_checkpoint(PREFIX, CKPT["epoch"])
    assert sym.list_arguments() == CKPT["list_arguments"]
    assert sym.list_auxiliary_states() == CKPT["list_auxiliary_states"]
    assert list(args) == CKPT["loaded_arg_names"] and list(auxs) == CKPT["loaded_aux_names"]
    for name, desc in CKPT["arg_params"].items():
        assert_matches(args[name], desc)
        assert args[name].context == mx.cpu(0)
    for name, desc in CKPT["aux_params"].items():
        assert_matches(auxs[name], desc)


@pytest.mark.parametrize("ctx", [mx.cpu(0), mx.cpu(1)], ids=str)
def test_save_checkpoint_writes_mxnet_bytes(tmp_path, ctx):
    sym = mx.sym.load(PREFIX + "-symbol.json")
    args, auxs = _golden_params(ctx)
    prefix = str(tmp_path / "mlp")
    mx.model.save_checkpoint(prefix, CKPT["epoch"], sym, args, auxs)
    assert sorted(os.listdir(tmp_path)) == ["mlp-0003.params", "mlp-symbol.json"]
    # params are saved from cpu(0) copies, so cpu(1) arrays give the same bytes
    assert (tmp_path / "mlp-0003.params").read_bytes() == golden_bytes("mlp-0003.params")
    assert json.loads((tmp_path / "mlp-symbol.json").read_text()) == \
        json.loads((GOLDEN_DIR / "mlp-symbol.json").read_text())


@pytest.mark.gpu
def test_save_checkpoint_from_gpu_saves_cpu_copies(tmp_path):
    sym = mx.sym.load(PREFIX + "-symbol.json")
    args, auxs = _golden_params(mx.gpu(0))
    mx.model.save_checkpoint(str(tmp_path / "mlp"), 3, sym, args, auxs)
    assert (tmp_path / "mlp-0003.params").read_bytes() == golden_bytes("mlp-0003.params")


def test_round_trip_with_a_neomx_symbol(tmp_path):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    args = {"fc_weight": mx.nd.array(np.arange(8).reshape(2, 4)), "fc_bias": mx.nd.ones((2,))}
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 12345, net, args, {})
    assert os.path.exists(prefix + "-12345.params")
    sym, arg2, aux2 = mx.model.load_checkpoint(prefix, 12345)
    assert sym.tojson() == net.tojson()
    assert aux2 == {} and sorted(arg2) == ["fc_bias", "fc_weight"]
    np.testing.assert_array_equal(arg2["fc_weight"].asnumpy(), np.arange(8).reshape(2, 4))


def test_symbol_none_writes_params_only(tmp_path):
    mx.model.save_checkpoint(str(tmp_path / "p"), 0, None, {"w": mx.nd.ones(1)}, {})
    assert os.listdir(tmp_path) == ["p-0000.params"]
    assert mx.nd.load(str(tmp_path / "p-0000.params")).keys() == {"arg:w"}


def test_load_params_splits_at_the_first_colon_and_skips_other_prefixes(tmp_path):
    mx.nd.save(str(tmp_path / "m-0001.params"),
               {"arg:a:b": mx.nd.ones(1), "aux:c": mx.nd.zeros(1), "opt:d": mx.nd.ones(1)})
    args, auxs = mx.model.load_params(str(tmp_path / "m"), 1)
    assert list(args) == ["a:b"] and list(auxs) == ["c"]


def test_load_params_of_an_empty_file_warns(tmp_path, caplog):
    mx.nd.save(str(tmp_path / "e-0002.params"), {})
    with caplog.at_level(logging.WARNING):
        assert mx.model.load_params(str(tmp_path / "e"), 2) == ({}, {})
    assert "is empty" in caplog.text


def test_load_params_rejects_unnamed_and_unprefixed_files(tmp_path):
    mx.nd.save(str(tmp_path / "l-0000.params"), [mx.nd.ones(1)])
    with pytest.raises(ValueError, match="unnamed"):
        mx.model.load_params(str(tmp_path / "l"), 0)
    mx.nd.save(str(tmp_path / "k-0000.params"), {"weight": mx.nd.ones(1)})
    with pytest.raises(ValueError, match="no 'arg:' or 'aux:' prefix"):
        mx.model.load_params(str(tmp_path / "k"), 0)


def test_missing_checkpoint_raises_mxnet_error(tmp_path):
    with pytest.raises(mx.MXNetError):
        mx.model.load_params(str(tmp_path / "nothing"), 1)
