"""Logging utilities, as MXNet 1.9.1's ``mxnet.log``: loggers with MXNet's glog-like format
(``W1130 21:05:00 1234 file.py:func:12] message``, colored by level on a stream)."""
from __future__ import annotations

import logging
import warnings

__all__ = ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET", "get_logger", "getLogger"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}


class _Formatter(logging.Formatter):
    """Customized log formatter: colored level letter, date, process, file:function:line."""

    def __init__(self):
        super().__init__(datefmt="%m%d %H:%M:%S")

    def _get_color(self, level):
        if logging.WARNING <= level:
            return "\x1b[31m"
        if logging.INFO <= level:
            return "\x1b[32m"
        return "\x1b[34m"

    def _get_label(self, level):
        return _LABELS.get(level, "U")

    def format(self, record):
        fmt = self._get_color(record.levelno) + self._get_label(record.levelno)
        fmt += "%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m %(message)s"
        self._style._fmt = fmt
        return super().format(record)


def getLogger(name=None, filename=None, filemode=None, level=WARNING):
    """Gets a customized logger.

    .. note:: `getLogger` is deprecated. Use `get_logger` instead.
    """
    warnings.warn("getLogger is deprecated, Use get_logger instead.",
                  DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """Gets a customized logger.

    The first call for a ``name`` adds one handler (a stream with MXNet's colored format, or a
    plain ``FileHandler`` on ``filename`` opened with ``filemode``, default ``'a'``) and sets
    ``level``; later calls return the same logger unchanged. ``name=None`` is the root logger,
    returned as it is.

    Parameters
    ----------
    name: str, optional
        Name of the logger.
    filename: str, optional
        The filename to which the logger's output will be sent.
    filemode: str, optional
        The file mode to open the file (corresponding to `filename`),
        default is 'a' if `filename` is not ``None``.
    level: int, optional
        The `logging` level for the logger.

    Returns
    -------
    Logger
        A customized `Logger` object.

    Examples
    --------
    >>> import neomx as mx
    >>> logger = mx.log.get_logger("neomx.doctest", level=mx.log.DEBUG)
    >>> logger.level == mx.log.DEBUG and len(logger.handlers)
    1
    """
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", None):
        logger._init_done = True
        if filename:
            hdlr = logging.FileHandler(filename, filemode if filemode else "a")
        else:
            hdlr = logging.StreamHandler()
            # the colors' escape sequences suit terminals, not files
            hdlr.setFormatter(_Formatter())
        logger.addHandler(hdlr)
        logger.setLevel(level)
    return logger
