"""Training-mode flag for imperative ops (``mx.autograd.train_mode``/``predict_mode``)."""
from __future__ import annotations

import contextvars

_training: contextvars.ContextVar[bool] = contextvars.ContextVar("neomx_training", default=False)


def is_training() -> bool:
    return _training.get()


def set_training(train_mode: bool) -> bool:
    prev = _training.get()
    _training.set(bool(train_mode))
    return prev


class _Scope:
    def __init__(self, train):
        self._train = train
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_training.set(self._train))

    def __exit__(self, *exc):
        _training.reset(self._tokens.pop())


def train_mode():
    return _Scope(True)


def predict_mode():
    return _Scope(False)
