"""A process forked after neomx has computed (torch's thread pool used, engine threads started)
computes in the child as MXNet's pthread_atfork handlers allow: the parent's pushed work is
finished before the fork, the child gets a fresh engine and runs its kernels on one thread.
Each case runs in a subprocess with a timeout, so a hang fails the test instead of CI."""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux")

SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import neomx as mx
    import torch
    torch.set_num_threads(2)
    a = mx.nd.ones((600, 600))
    mx.nd.dot(a, a).asnumpy()  # the parent uses torch's intra-op thread pool
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
    ex = net.simple_bind(mx.cpu(), data=(8, 5))
    for arr in ex.arg_arrays:
        arr[:] = 0.5
    ex.forward(is_train=True)  # asynchronous work on the engine's device worker
    pid = os.fork()
    if pid == 0:
        b = mx.nd.ones((600, 600))
        s = float(mx.nd.dot(b, b).sum().asscalar())
        ex.forward(is_train=False)  # a fresh engine: its asynchronous pushes run
        out = ex.outputs[0].asnumpy()
        ok = s == 600.0 ** 3 and np.allclose(out, 0.5 * 0.5 * 5 + 0.5) and torch.get_num_threads() == 1
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
    print("parent", float(mx.nd.dot(a, a).sum().asscalar()) == 600.0 ** 3, torch.get_num_threads())
""")


def test_a_forked_child_computes():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, r.stdout + r.stderr
    assert "parent True 2" in r.stdout, r.stdout


def test_an_asynchronous_error_survives_the_fork():
    script = textwrap.dedent("""
        import os
        import neomx as mx
        from neomx import engine
        def fail():
            raise ValueError("boom")
        engine.push(fail, ctx=mx.cpu(), asynchronous=True)
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        try:
            mx.nd.waitall()
        except ValueError as e:
            print("raised", e)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "raised boom" in r.stdout, r.stdout + r.stderr
