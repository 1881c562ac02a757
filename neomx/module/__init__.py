"""``mx.mod`` / ``mx.module``: the Module API (MXNet 1.9.1).

* :class:`BaseModule` -- the state machine and ``fit``/``score``/``predict``.
* :class:`Module` -- a Symbol on one or more contexts (data parallel).
* :class:`BucketingModule` -- one Module per bucket key, sharing parameters.
* :class:`DataParallelExecutorGroup` -- the per-context executors behind a Module.
* :class:`SequentialModule` -- modules chained; :class:`PythonModule`,
  :class:`PythonLossModule` -- modules written in Python.
"""
from __future__ import annotations

from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "BucketingModule", "DataParallelExecutorGroup",
           "SequentialModule", "PythonModule", "PythonLossModule"]
