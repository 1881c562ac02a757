"""``gluon.model_zoo``: MXNet 1.9.1's predefined vision models (:mod:`.vision`, with
``vision.get_model``) and the local store of their pretrained parameters (:mod:`.model_store`).
"""
from . import model_store, vision

__all__ = ["model_store", "vision"]
