"""Shared fixtures: contexts, a seed fixture that reports its seed, per-dtype tolerances."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest
import torch

import neomx as mx

TOLERANCES = {np.float16: (1e-2, 1e-2), np.float32: (1e-5, 1e-6), np.float64: (1e-10, 1e-12)}


def pytest_report_header(config):
    return (f"neomx {mx.__version__}, torch {torch.__version__}, numpy {np.__version__}, "
            f"GPUs: {mx.num_gpus()}")


@pytest.fixture
def seed(request):
    """Seeds numpy, torch and neomx; prints the seed when the test fails (MXNet's with_seed)."""
    s = int(os.environ.get("NEOMX_TEST_SEED", random.randrange(2**31)))
    np.random.seed(s)
    mx.random.seed(s)
    yield s
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        print(f"\n*** test failed with seed NEOMX_TEST_SEED={s} ***")


@pytest.fixture(autouse=True)
def wait_for_engine():
    """Waits for every pushed operation after each test, so that an error of asynchronous work
    fails the test that caused it (at teardown), not a later one."""
    yield
    mx.nd.waitall()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


def _contexts():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    if mx.num_gpus():
        ctxs.append(mx.gpu(0))
    return ctxs


@pytest.fixture(params=_contexts(), ids=str)
def ctx(request):
    """Every available context: cpu(0), cpu(1) and gpu(0) when present."""
    return request.param


def pytest_collection_modifyitems(config, items):
    if mx.num_gpus():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
