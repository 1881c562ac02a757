"""Helpers shared by the benchmark workers (both venvs: import nothing but numpy and the stdlib).

* thread pinning (the same OpenMP/BLAS/torch thread count for every peer),
* synthetic data with the tutorial's shapes (generated before any timed region),
* memory probes (current RSS, resettable peak RSS),
* LeNet's analytic FLOP count.
"""
from __future__ import annotations

import os
import resource

import numpy as np

THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                   "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS")


def thread_env(threads):
    """Environment variables that fix every threaded math library to ``threads`` threads."""
    return {k: str(threads) for k in THREAD_ENV_VARS}


def pin_threads(threads):
    """Must run before numpy/torch/mxnet create their thread pools (the worker does it first)."""
    os.environ.update(thread_env(threads))


def set_torch_threads(torch, threads):
    torch.set_num_threads(threads)
    return torch.get_num_threads()


# --- synthetic data ----------------------------------------------------------------------------
def toy_batches(n_batches, batch_size=100, num_features=100, num_classes=10, seed=0):
    """``ToyData.get(batch_size)`` batches of the tutorial (Gaussian clusters), float64 like it."""
    rng = np.random.RandomState(seed)
    mu = rng.rand(num_classes, num_features)
    sigma = np.ones((num_classes, num_features)) * 0.1
    per_cls = batch_size // num_classes
    out = []
    for _ in range(n_batches):
        x = np.zeros((batch_size, num_features))
        y = np.zeros((batch_size, ))
        for i in range(num_classes):
            x[i*per_cls:(i+1)*per_cls] = rng.normal(mu[i, :], sigma[i, :], (per_cls, num_features))
            y[i*per_cls:(i+1)*per_cls] = i
        out.append((x, y))
    return out


def mnist_like_batches(n_batches, batch_size=1024, seed=0):
    """Random 0-255 "pixels" (batch, 784) and labels 0-9, float64 like the example's ``MNIST.get``."""
    rng = np.random.RandomState(seed)
    return [(rng.randint(0, 256, size=(batch_size, 784)).astype(np.float64),
             rng.randint(0, 10, size=(batch_size, )).astype(np.float64)) for _ in range(n_batches)]


def cycling(batches):
    """A ``data()`` callable for the tutorial's ``train``: returns the batches in turn."""
    state = {"i": 0}

    def data():
        b = batches[state["i"] % len(batches)]
        state["i"] += 1
        return b
    return data


# --- memory ------------------------------------------------------------------------------------
def _status_kib(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_bytes():
    """Current resident set size (Linux /proc), or None."""
    kib = _status_kib("VmRSS")
    return None if kib is None else kib * 1024


def reset_peak_rss():
    """Reset the kernel's RSS high-water mark (VmHWM) to the current RSS; True if supported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_bytes():
    """Peak RSS since the last ``reset_peak_rss`` (VmHWM), else the process's ``ru_maxrss``."""
    kib = _status_kib("VmHWM")
    if kib is None:
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib * 1024


# --- FLOPs ---------------------------------------------------------------------------------------
# LeNet of the tutorial on 1x28x28: (out_channels, out_h, out_w, macs_per_output) per layer.
LENET_LAYERS = {
    "conv1": (20, 24, 24, 1 * 5 * 5),
    "conv2": (50, 8, 8, 20 * 5 * 5),
    "fc1": (500, 1, 1, 800),
    "fc2": (10, 1, 1, 500),
}


def lenet_flops_per_sample():
    """FLOPs of one training step per sample, counting convolution and fully-connected layers.

    Each layer costs ``F = 2 * MACs`` forward, ``F`` for the weight gradient and ``F`` for the
    input gradient, except conv1 whose input gradient (w.r.t. the data) training does not need.
    Activations, pooling, softmax and the update are ignored (< 1% here).
    """
    total = 0
    for name, (c, h, w, k) in LENET_LAYERS.items():
        f = 2 * c * h * w * k
        total += 2 * f if name == "conv1" else 3 * f
    return total
