"""Graph passes over the Node IR: shape/type inference, the gradient pass, execution planning."""
