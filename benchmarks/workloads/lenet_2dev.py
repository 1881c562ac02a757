"""``lenet-2dev``: the tutorial's ``train`` on ``[cpu(0), cpu(1)]`` with equal power (512 + 512),
50 iterations of batch 1024. Metric: seconds for the 50 iterations (bind/init/warm-up excluded).

The PyTorch peer runs the same algorithm with two model replicas one after the other (plain eager
PyTorch has one CPU device: there is nothing natural to run them on concurrently)."""
from __future__ import annotations

from workloads import lenet

METRIC = ("time_s", "s", "50 iterations, batch 1024 split over cpu(0), cpu(1)")


def _devices(mx):
    return [mx.cpu(0), mx.cpu(1)], [1, 1]


def run_mx(mx, cfg):
    return lenet.run_mx(mx, cfg, devices=_devices)


def run_torch(torch, cfg):
    return lenet.run_torch(torch, cfg, n_replicas=2)
