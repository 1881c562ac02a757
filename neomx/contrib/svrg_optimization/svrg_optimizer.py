"""The optimizers :class:`~neomx.contrib.svrg_optimization.svrg_module.SVRGModule` installs.

``_SVRGOptimizer`` wraps the user's optimizer: parameters whose name contains ``full`` (the
``<param>_full`` keys where a KVStore sums the full gradients) go to ``_AssignmentOptimizer``,
which stores the pushed gradient as the value; every other parameter goes to the user's one.
Both are meant for SVRGModule only.
"""
from __future__ import annotations

from ...optimizer import Optimizer, create

# Keyword arguments of the base Optimizer; the rest of what _SVRGOptimizer gets is only for the
# optimizer it wraps.
_BASE_PARAMS = ('rescale_grad', 'param_idx2name', 'wd', 'clip_gradient', 'learning_rate',
                'lr_scheduler', 'sym', 'begin_num_update', 'multi_precision', 'param_dict')


@Optimizer.register
class _AssignmentOptimizer(Optimizer):
    """Writes the gradient into the weight: how a KVStore accumulates SVRG's full gradients
    across devices and workers (the store keeps the sum it was pushed)."""

    def update(self, index, weight, grad, state):
        """``weight[:] = grad`` (no state, no learning rate)."""
        weight[:] = grad


@Optimizer.register
class _SVRGOptimizer(Optimizer):
    """Dispatches each update by parameter name: ``*full*`` keys to an
    :class:`_AssignmentOptimizer`, everything else to ``default_optimizer``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer given to ``SVRGModule.init_optimizer``; a name is created with all
        the other keyword arguments.
    **kwargs
        The base Optimizer's arguments (``rescale_grad``, ``param_idx2name``, ...) and those
        of ``default_optimizer`` (``momentum``, ...).
    """

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The keyword arguments the base Optimizer takes (the rest are the wrapped one's)."""
        return {key: value for key, value in kwargs.items() if key in _BASE_PARAMS}

    def _check_index(self, index):
        """The parameter name of ``index`` (an int of ``idx2name``, or already a name)."""
        if index in self.idx2name.values():
            return index
        return self.idx2name[index]

    def _pick(self, index):
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def update(self, index, weight, grad, state):
        """One step of the optimizer ``index``'s name selects (see the class)."""
        self._pick(index).update(index, weight, grad, state)

    def create_state(self, index, weight):
        """The state of the optimizer ``index``'s name selects."""
        return self._pick(index).create_state(index, weight)
