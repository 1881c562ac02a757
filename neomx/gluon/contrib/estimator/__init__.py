"""``gluon.contrib.estimator``: MXNet 1.9.1's high-level training loop.

An :class:`Estimator` owns a net, a loss, metrics and a Trainer; ``fit`` runs the loop and
calls *event handlers* at six points (train/epoch/batch begin and end). The default handlers
(stopping, gradient update, metrics, validation, logging) are added unless given explicitly;
``CheckpointHandler`` and ``EarlyStoppingHandler`` are opt-in.
"""
from . import estimator
from . import event_handler
from . import batch_processor
from . import utils
from .estimator import Estimator
from .event_handler import (TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd,
                            StoppingHandler, MetricHandler, ValidationHandler, LoggingHandler,
                            CheckpointHandler, EarlyStoppingHandler, GradientUpdateHandler)
from .batch_processor import BatchProcessor

__all__ = (estimator.__all__ + event_handler.__all__ + batch_processor.__all__)
