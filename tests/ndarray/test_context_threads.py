"""``with ctx:`` from several threads at once on the same Context objects (Gluon blocks called
in a DataLoader's thread pool enter their input's context)."""
import threading

import neomx as mx


def test_with_context_is_per_thread():
    errors, barrier = [], threading.Barrier(4)
    ctxs = [mx.cpu(0), mx.cpu(1)]

    def work(k):
        try:
            barrier.wait()
            for i in range(300):
                with ctxs[i % 2]:
                    with ctxs[(i + k) % 2]:
                        assert mx.current_context() == ctxs[(i + k) % 2]
                    assert mx.current_context() == ctxs[i % 2]
            assert mx.current_context() == mx.cpu(0)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
