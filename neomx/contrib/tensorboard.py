"""TensorBoard functions that can be used to log various status during epoch
(``mx.contrib.tensorboard``)."""
from __future__ import annotations

__all__ = ["LogMetricsCallback"]


def _summary_writer(logging_dir):
    """A SummaryWriter from mxboard (MXNet's choice) or else torch.utils.tensorboard."""
    try:
        from mxboard import SummaryWriter
    except ImportError:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise ImportError(
                "mx.contrib.tensorboard.LogMetricsCallback needs a TensorBoard writer: install "
                "the 'tensorboard' package (pip install tensorboard; used through "
                "torch.utils.tensorboard) or MXNet's 'mxboard'") from None
    return SummaryWriter(logging_dir)


class LogMetricsCallback:
    """Log metrics periodically in TensorBoard.

    This callback works almost same as `callback.Speedometer`, but write TensorBoard event file
    for visualization. Each call writes every ``(name, value)`` of ``param.eval_metric`` as a
    scalar at step ``param.epoch``.

    Parameters
    ----------
    logging_dir : str
        TensorBoard event file directory (``tensorboard --logdir=path/to/logs``).
    prefix : str
        Prefix for a metric name of `scalar` value (``'<prefix>-<name>'``).

    Raises
    ------
    ImportError
        Neither ``mxboard`` nor ``tensorboard`` is installed (the message names them; MXNet
        only logs an error and fails at the first call).
    """

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        self.summary_writer = _summary_writer(logging_dir)

    def __call__(self, param):
        """Callback to log training speed and metrics in TensorBoard."""
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = "%s-%s" % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
