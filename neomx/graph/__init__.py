"""Graph passes over the Node IR: shape/type inference, the gradient pass, execution planning."""

from . import subgraph  # noqa: E402,F401  (installs the runner of control-flow subgraphs)
