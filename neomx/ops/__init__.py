"""Operator definitions: importing this package registers every operator."""
from . import registry
from . import elemwise, nn, reduce, shape, random  # noqa: F401  (registration side effects)
from . import samplers  # noqa: F401  _random_gamma, _sample_normal, _sample_multinomial, _shuffle, ... (mx.nd.random.*)
from . import conv, norm  # noqa: F401  Convolution, Pooling; BatchNorm, Dropout, LeakyReLU, Embedding
from . import matrix, softmax, loss  # noqa: F401  Concat, split, transpose, ...; softmax; loss heads
from . import math  # noqa: F401  sin, erf, gamma, rint, hypot, smooth_l1, ...
from . import optimizer_ops, amp  # noqa: F401  sgd_update, adam_update, ...; all_finite, amp_cast
from . import nn_layers, nn_spatial, nn_losses  # noqa: F401  LayerNorm, ...; ROIPooling, ...; CTCLoss, ...
from . import indexing, layout  # noqa: F401  take, pick, gather_nd, sort, ...; slice_like, Pad, eye, ...
from . import linalg  # noqa: F401  linalg_gemm, linalg_potrf, linalg_det, ... (mx.nd.linalg.*)
from . import contrib_boxes  # noqa: F401  box_iou, box_nms, bipartite_matching, box_encode/decode
from . import contrib_detection  # noqa: F401  MultiBoxPrior/Target/Detection, ROIAlign
from . import contrib_misc  # noqa: F401  arange_like, index_copy, BilinearResize2D, interleaved_matmul_*, ...
from . import image_ops  # noqa: F401  mx.nd.image.*: to_tensor, normalize, resize, crop, flips, colour jitter
from . import custom  # noqa: F401  Custom, _backward_Custom (mx.operator: operators written in Python)
from . import rnn  # noqa: F401  RNN (the fused rnn_relu/rnn_tanh/lstm/gru operator)
from . import control_flow  # noqa: F401  _foreach, _while_loop, _cond (nodes holding subgraphs)
from . import contrib_more  # noqa: F401  khatri_rao, boolean_mask, hawkesll, _multi_mp_lamb_update
from . import contrib_deform  # noqa: F401  DeformableConvolution, PSROIPooling, Proposal, ...
from . import quantization  # noqa: F401  quantize_v2, requantize, quantized_conv, ... (INT8 inference)
from . import sparse_updates  # noqa: F401  row_sparse sgd/adam updates, _sparse_adagrad_update, group_adagrad_update
from . import contrib_graph  # noqa: F401  getnnz, edge_id, dgl_adjacency, dgl_subgraph, dgl samplers, dgl_graph_compact
from . import pdf  # noqa: F401  nanprod, _random_pdf_<dist> (mx.nd.random_pdf_*)
from . import contrib_rest  # noqa: F401  BatchNormWithReLU, SyncBatchNorm, RROIAlign, fft, ifft, count_sketch
from .registry import OpDef, OpContext, Param, Params, get, find, all_ops, register

__all__ = ["registry", "OpDef", "OpContext", "Param", "Params", "get", "find", "all_ops", "register"]
