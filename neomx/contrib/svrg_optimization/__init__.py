"""``mx.contrib.svrg_optimization``: SVRG (stochastic variance-reduced gradient) training.

* :class:`~.svrg_module.SVRGModule` -- a Module that keeps a second module on a weight snapshot
  and corrects each batch gradient with it and the full-data gradient at the snapshot.
* :mod:`.svrg_optimizer` -- the two helper optimizers it installs (``_SVRGOptimizer`` and
  ``_AssignmentOptimizer``, registered by those names).

Johnson and Zhang, "Accelerating Stochastic Gradient Descent using Predictive Variance
Reduction" (NIPS 2013).
"""
from . import svrg_module
from . import svrg_optimizer
