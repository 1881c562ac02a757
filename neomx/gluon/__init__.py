"""``mx.gluon``: Blocks, parameters, hybridization into neomx's executor, layers, losses and
the Trainer (MXNet 1.9.1's Gluon API)."""
from . import contrib, loss, nn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import (Constant, DeferredInitializationError, Parameter, ParameterDict,
                        tensor_types)
from .trainer import Trainer
from . import data  # noqa: E402  gluon.data: datasets, samplers, DataLoader, vision
from . import model_zoo  # noqa: E402  gluon.model_zoo: the predefined vision models
from . import rnn  # noqa: E402  gluon.rnn: recurrent cells and the fused RNN/LSTM/GRU layers

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "Constant", "ParameterDict",
           "Trainer", "DeferredInitializationError", "contrib", "loss", "nn", "rnn", "utils"]
