"""How the Estimator trains and evaluates on one batch (replaceable by the user)."""
from ...utils import split_and_load
from .... import autograd

__all__ = ['BatchProcessor']


class BatchProcessor:
    """Hooks ``fit_batch`` and ``evaluate_batch`` used by :class:`Estimator`.

    Subclass and override them to customize what happens on a minibatch; both return
    ``(data, label, pred, loss)``, each a list with one entry per context.
    """

    def __init__(self):
        pass

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Run ``estimator.val_net`` and ``estimator.val_loss`` on a validation batch.

        Parameters
        ----------
        estimator : Estimator
        val_batch : tuple
            (data, label) from the validation DataLoader.
        batch_axis : int, default 0
            Axis along which the batch is split over ``estimator.context``.
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward and backward ``estimator.net`` and ``estimator.loss`` on a training batch.

        The parameters are not updated here: ``GradientUpdateHandler`` steps the trainer at
        batch end.

        Returns
        -------
        data, label, pred, loss : lists of NDArray, one entry per context.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for l in loss:
            l.backward()
        return data, label, pred, loss
