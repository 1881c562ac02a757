"""``gluon-lenet-imperative``: ``gluon-lenet`` without hybridize (every layer runs its
``hybrid_forward`` on NDArrays, recorded by autograd); PyTorch eager is the same as there."""
from __future__ import annotations

from workloads import gluon_lenet

METRIC = ("time_s", "s", "50 steps, batch 256, not hybridized")


def run_mx(mx, cfg):
    return gluon_lenet.train_mx(mx, cfg, hybridize=False)


run_torch = gluon_lenet.run_torch
