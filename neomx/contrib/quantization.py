"""``mx.contrib.quantization``: turn an FP32 model into an INT8 one (MXNet 1.9.1's API).

:func:`quantize_model` / :func:`quantize_graph` rewrite a float Symbol as MXNet's quantization
pass does (``src/operator/quantization/quantize_graph_pass.cc``): every quantizable node becomes
``quantized_<name>`` (``_contrib_quantized_conv``, ``_fully_connected``, ``_pooling``, ``_act``,
``_flatten``, ``_concat``, ``_elemwise_add``, ``_elemwise_mul``, ``_batch_norm``) fed by int8/uint8
data plus ``min``/``max`` ranges; float inputs get a ``<name>_quantize`` (``_contrib_quantize_v2``)
node, parameters named in ``offline_params`` become ``<param>_quantize`` variables (with
``_min``/``_max``) quantized once by :func:`_quantize_params`, int32 results get a
``requantize_<name>`` node, and float consumers read a ``<name>_dequantize`` node. ``quantize_mode
='smart'`` quantizes the "support" ops (pooling, activation, flatten, ...) only between two
"must" ops (convolution, fully connected). Calibration (``naive``: min/max of each layer's
output over ``calib_data``; ``entropy``: the KL-optimal threshold of its histogram) stores the
thresholds as ``min_calib_range``/``max_calib_range`` on the quantize/requantize nodes, so the
quantized model needs no runtime min/max search.

Not here: ``quantize_model_mkldnn`` (oneDNN's fusion passes into ``_sg_mkldnn_conv`` subgraph
nodes, which neomx does not have) and channel-wise granularity. ``quantize_net``/``quantize_net_v2``
quantize the unfused graph (MXNet 1.9.1 on a CPU context first fuses it with the MKLDNN_QUANTIZE
backend).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import warnings

import numpy as np

from ..base import MXNetError
from ..context import Context, cpu
from ..io import DataBatch, DataDesc, DataIter
from .. import ndarray
from ..ndarray import NDArray
from ..ndarray import load as nd_load
from ..ndarray import save as nd_save
from ..symbol import Symbol
from ..symbol import load as sym_load
from ..symbol import load_json as sym_load_json

__all__ = ["quantize_model", "quantize_graph", "calib_graph", "quantize_net", "quantize_net_v2",
           "combine_histogram"]

_MUST, _SUPPORT = "must", "support"
# fp32 op -> (quantized op, kind, needs requantize, indices of inputs kept in float)
_QUANTIZABLE = {
    "Convolution": ("_contrib_quantized_conv", _MUST, True, ()),
    "FullyConnected": ("_contrib_quantized_fully_connected", _MUST, True, ()),
    "Pooling": ("_contrib_quantized_pooling", _SUPPORT, False, ()),
    "Activation": ("_contrib_quantized_act", _SUPPORT, False, ()),
    "Flatten": ("_contrib_quantized_flatten", _SUPPORT, False, ()),
    "Concat": ("_contrib_quantized_concat", _SUPPORT, False, ()),
    "elemwise_add": ("_contrib_quantized_elemwise_add", _SUPPORT, True, ()),
    "elemwise_mul": ("_contrib_quantized_elemwise_mul", _SUPPORT, True, ()),
    "BatchNorm": ("_contrib_quantized_batch_norm", _SUPPORT, False, (1, 2, 3, 4)),
}
# ops registered with FListOutputNames in MXNet: their outputs are named "<node>_<name>" when a
# quantize node is inserted after them (the others use "<node>_<index>")
_NAMED_OUTPUTS = {"Activation", "Pooling", "Concat", "elemwise_add", "BatchNorm", "Dropout",
                  "LeakyReLU", "softmax", "log_softmax", "LayerNorm", "FullyConnected",
                  "Convolution", "Deconvolution", "SoftmaxActivation", "L2Normalization",
                  "SoftmaxOutput", "LRN", "InstanceNorm", "GroupNorm", "RNN", "UpSampling"}
_OP_ALIASES = {"concat": "Concat", "flatten": "Flatten", "_plus": "elemwise_add",
               "_add": "elemwise_add", "_Plus": "elemwise_add", "_mul": "elemwise_mul",
               "_Mul": "elemwise_mul"}


def _quantizable(node, excluded_symbols, excluded_ops):
    op = _OP_ALIASES.get(node["op"], node["op"])
    if op not in _QUANTIZABLE or node["name"] in excluded_symbols or node["op"] in excluded_ops \
            or op in excluded_ops:
        return None
    attrs = node.get("attrs", {})
    if op == "Activation" and attrs.get("act_type") != "relu":
        logging.info("Currently, quantized activation only supports relu, exclude %s which "
                     "act_type is %s", node["name"], attrs.get("act_type"))
        return None
    if op == "Pooling" and attrs.get("pool_type", "max") not in ("max", "avg"):
        return None
    return op


def _mark_smart(nodes, kinds):
    """MXNet's 'smart' mode: a support node stays quantized only when a must node is reachable
    both upstream and downstream of it through quantizable nodes."""
    consumers = {i: [] for i in range(len(nodes))}
    for i, n in enumerate(nodes):
        for e in n["inputs"]:
            consumers[e[0]].append(i)
    must = [i for i, k in kinds.items() if k == _MUST]
    flags = {i: 0 for i, k in kinds.items() if k == _SUPPORT}
    for bit, step in ((1, lambda i: [e[0] for e in nodes[i]["inputs"]]),
                      (2, lambda i: consumers[i])):
        queue = list(must)
        while queue:
            i = queue.pop(0)
            for j in step(i):
                if j in flags and not flags[j] & bit:
                    flags[j] |= bit
                    queue.append(j)
    return {i: k for i, k in kinds.items() if k == _MUST or flags.get(i) == 3}


class _Builder:
    """The quantized graph as MXNet JSON nodes (appended in creation order; serialized again
    through neomx's Symbol, which lays it out depth-first as MXNet does)."""

    def __init__(self):
        self.nodes = []

    def add(self, op, name, inputs=(), attrs=None):
        node = {"op": op, "name": name, "inputs": [[i, k, 0] for i, k in inputs]}
        if attrs:
            node["attrs"] = dict(attrs)
        self.nodes.append(node)
        return len(self.nodes) - 1

    def var(self, name):
        return self.add("null", name)


def _quantize_symbol(sym, ctx, excluded_symbols=None, excluded_operators=None,
                     offline_params=None, quantized_dtype="int8", quantize_mode="smart",
                     quantize_granularity="tensor-wise"):
    """The quantized Symbol and the names of the layer outputs that need calibration."""
    excluded_symbols = list(excluded_symbols or [])
    excluded_operators = list(excluded_operators or [])
    offline = set(offline_params or [])
    if quantized_dtype not in ("int8", "uint8", "auto"):
        raise MXNetError(f"unknown quantized_dtype {quantized_dtype} received, expected `int8`, "
                         f"`uint8` or `auto`")
    if quantize_mode not in ("full", "smart"):
        raise MXNetError(f"unknown quantize_mode {quantize_mode} received, expected `full` or "
                         f"`smart`")
    if quantize_granularity != "tensor-wise":
        raise MXNetError("neomx supports quantize_granularity='tensor-wise' only "
                         f"(got {quantize_granularity!r})")
    graph = json.loads(sym.tojson())
    nodes = graph["nodes"]
    kinds, ops = {}, {}
    for i, n in enumerate(nodes):
        if n["op"] == "null":
            continue
        op = _quantizable(n, excluded_symbols, excluded_operators)
        if op is not None:
            ops[i] = op
            kinds[i] = _QUANTIZABLE[op][1]
    if quantize_mode == "smart":
        kinds = _mark_smart(nodes, kinds)
    out = _Builder()
    mirror = {}      # old node id -> new node id (the requantize node for int32 results)
    quantized = {}   # old node ids whose mirror carries (data, min, max)
    qcache = {}      # (old id, index) -> new quantize node id
    offline_vars = {}
    calib = []
    calib_node = {}  # new node name -> calibration key

    def output_name(i, k):
        n = nodes[i]
        if n["op"] == "null":
            return n["name"]
        op = _OP_ALIASES.get(n["op"], n["op"])
        return f"{n['name']}_output" if op in _NAMED_OUTPUTS else f"{n['name']}_{k}"

    def calib_key(i, k):
        n = nodes[i]
        return n["name"] if n["op"] == "null" else f"{n['name']}_output"

    def quantized_entry(i, k):
        """(data, min, max) entries of old entry (i, k) for a quantized consumer."""
        if i in quantized:
            m = mirror[i]
            return (m, 0), (m, 1), (m, 2)
        n = nodes[i]
        if n["op"] == "null" and n["name"] in offline:
            if n["name"] not in offline_vars:
                offline_vars[n["name"]] = out.var(n["name"] + "_quantize")
            v = offline_vars[n["name"]]
            return (v, 0), ("min", n["name"]), ("max", n["name"])
        if (i, k) not in qcache:
            name = output_name(i, k) + "_quantize"
            qcache[(i, k)] = out.add("_contrib_quantize_v2", name, [(mirror[i], k)],
                                     {"out_type": quantized_dtype})
            key = calib_key(i, k)
            calib.append(key)
            calib_node[name] = key
        q = qcache[(i, k)]
        return (q, 0), (q, 1), (q, 2)

    def float_entry(i, k):
        if i in quantized:
            m = mirror[i]
            return out.add("_contrib_dequantize", nodes[i]["name"] + "_dequantize",
                           [(m, 0), (m, 1), (m, 2)]), 0
        return mirror[i], k

    for i, n in enumerate(nodes):
        if n["op"] == "null":
            mirror[i] = out.add("null", n["name"], (), n.get("attrs"))
            continue
        if i not in kinds:
            mirror[i] = out.add(n["op"], n["name"], [float_entry(e[0], e[1]) for e in n["inputs"]],
                                n.get("attrs"))
            continue
        qop, _, requant, keep_float = _QUANTIZABLE[ops[i]]
        data, ranges = [], []
        for pos, e in enumerate(n["inputs"]):
            if pos in keep_float:
                data.append(float_entry(e[0], e[1]))
                continue
            d, lo, hi = quantized_entry(e[0], e[1])
            data.append(d)
            ranges += [lo, hi]
        resolved = []
        for ent in ranges:  # the offline parameters' range variables come after all the data
            if ent[0] in ("min", "max"):
                ent = (out.var(f"{ent[1]}_quantize_{ent[0]}"), 0)
            resolved.append(ent)
        qname = "quantized_" + n["name"]
        qnode = out.add(qop, qname, data + resolved, n.get("attrs"))
        if ops[i] == "BatchNorm":
            key = f"{n['name']}_output"
            calib.append(key)
            calib_node[qname] = key
        if requant:
            mirror[i] = out.add("_contrib_requantize", "requantize_" + n["name"],
                                [(qnode, 0), (qnode, 1), (qnode, 2)], {"out_type": quantized_dtype})
            key = f"{n['name']}_output"
            calib.append(key)
            calib_node["requantize_" + n["name"]] = key
        else:
            mirror[i] = qnode
        quantized[i] = True
    heads = []
    for h in graph["heads"]:
        node_id, k = float_entry(h[0], h[1])
        heads.append([node_id, k, 0])
    arg_nodes = [i for i, n in enumerate(out.nodes) if n["op"] == "null"]
    new = {"nodes": out.nodes, "arg_nodes": arg_nodes, "heads": heads,
           "attrs": graph.get("attrs", {})}
    new["node_row_ptr"] = list(range(len(out.nodes) + 1))
    qsym = sym_load_json(json.dumps(new))
    return qsym, calib


def _format_calib(v) -> str:
    return "%f" % float(np.float32(v))


def _calibrate_quantized_sym(qsym, th_dict):
    """``min_calib_range``/``max_calib_range`` from ``th_dict`` (layer output name -> (min,
    max)) on the quantize, requantize and quantized batch-norm nodes of ``qsym``."""
    if not th_dict:
        return qsym
    graph = json.loads(qsym.tojson())
    nodes = graph["nodes"]
    for n in nodes:
        op, name = n["op"], n["name"]
        key = None
        if op == "_contrib_quantize_v2" and n["inputs"]:
            # the layer it quantizes: a variable by its name, an operator by "<node>_output"
            src = nodes[n["inputs"][0][0]]
            key = src["name"] if src["op"] == "null" else src["name"] + "_output"
        elif op == "_contrib_requantize" and name.startswith("requantize_"):
            key = name[len("requantize_"):] + "_output"
        elif op == "_contrib_quantized_batch_norm" and name.startswith("quantized_"):
            key = name[len("quantized_"):] + "_output"
        if key is not None and key in th_dict:
            lo, hi = th_dict[key]
            attrs = n.setdefault("attrs", {})
            attrs["min_calib_range"] = _format_calib(lo)
            attrs["max_calib_range"] = _format_calib(hi)
    return sym_load_json(json.dumps(graph))


def _quantize_params(qsym, params, th_dict):
    """Quantize the ``*_weight``/``*_bias`` parameters ``qsym`` reads as ``<name>_quantize``
    (int8, with ``_min``/``_max``); other arguments are passed through."""
    quantized_params = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            original = name[:-len("_quantize")]
            param = params[original]
            val, vmin, vmax = ndarray.contrib.quantize(data=param, min_range=ndarray.min(param),
                                                       max_range=ndarray.max(param),
                                                       out_type="int8")
            quantized_params[name] = val
            quantized_params[name + "_min"] = vmin
            quantized_params[name + "_max"] = vmax
        elif name in params:
            quantized_params[name] = params[name]
        elif name.endswith("_min"):
            output = name[:-len("_min")]
            if output in th_dict:
                quantized_params[name] = ndarray.array([th_dict[output][0]])
        elif name.endswith("_max"):
            output = name[:-len("_min")]
            if output in th_dict:
                quantized_params[name] = ndarray.array([th_dict[output][1]])
    return quantized_params


def _aux_read_as_arguments(qsym, qarg_params, aux_params):
    """neomx's quantized batch norm reads the moving statistics as ordinary inputs (MXNet marks
    them auxiliary in the middle of its input list; neomx keeps auxiliary states last): they
    join the quantized arguments."""
    for name in qsym.list_arguments():
        if name not in qarg_params and aux_params and name in aux_params:
            qarg_params[name] = aux_params[name]
    return qarg_params


def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """Collect the histogram of ``arr`` and combine it with ``old_hist`` (``(hist, edges, min,
    max, threshold)``), widening the bins' span symmetrically when ``new_th`` exceeds it."""
    (old_hist, old_hist_edges, old_min, old_max, old_th) = old_hist
    if new_th <= old_th:
        hist, _ = np.histogram(arr, bins=len(old_hist), range=(-old_th, old_th))
        return (old_hist + hist, old_hist_edges, min(old_min, new_min), max(old_max, new_max),
                old_th)
    old_num_bins = len(old_hist)
    old_step = 2 * old_th / old_num_bins
    half_increased_bins = int((new_th - old_th) // old_step + 1)
    new_num_bins = half_increased_bins * 2 + old_num_bins
    new_th = half_increased_bins * old_step + old_th
    hist, hist_edges = np.histogram(arr, bins=new_num_bins, range=(-new_th, new_th))
    hist[half_increased_bins:new_num_bins - half_increased_bins] += old_hist
    return (hist, hist_edges, min(old_min, new_min), max(old_max, new_max), new_th)


def _as_numpy(arr):
    return arr.asnumpy() if isinstance(arr, NDArray) else np.asarray(arr)


def _monitor_name(name):
    return name.decode() if isinstance(name, bytes) else str(name)


class _LayerHistogramCollector(object):
    """Histograms of the monitored layer outputs (for entropy calibration)."""

    def __init__(self, num_bins=8001, include_layer=None, logger=None):
        self.hist_dict = {}
        self.num_bins = num_bins
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        """Monitor callback: add ``arr`` to layer ``name``'s histogram."""
        name = _monitor_name(name)
        if self.include_layer is not None and name not in self.include_layer:
            return
        arr = _as_numpy(arr)
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s" % (name, arr.shape))
        min_range = np.min(arr)
        max_range = np.max(arr)
        th = max(abs(min_range), abs(max_range))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], arr, min_range,
                                                     max_range, th)
        else:
            hist, hist_edges = np.histogram(arr, bins=self.num_bins, range=(-th, th))
            self.hist_dict[name] = (hist, hist_edges, min_range, max_range, th)


class _LayerOutputMinMaxCollector(object):
    """Running min and max of the monitored layer outputs (for naive calibration)."""

    def __init__(self, quantized_dtype, include_layer=None, logger=None):
        self.min_max_dict = {}
        self.quantized_dtype = quantized_dtype
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        """Monitor callback: fold ``arr``'s min and max into layer ``name``'s range."""
        name = _monitor_name(name)
        if self.include_layer is not None and name not in self.include_layer:
            return
        arr = _as_numpy(arr)
        min_range = float(np.min(arr))
        max_range = float(np.max(arr))
        if name in self.min_max_dict:
            cur = self.min_max_dict[name]
            self.min_max_dict[name] = (min(cur[0], min_range), max(cur[1], max_range))
        else:
            self.min_max_dict[name] = (min_range, max_range)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f"
                              % (name, min_range, max_range))


def _collect_layer_statistics(mod, data, collector, max_num_examples=None, logger=None):
    if not isinstance(data, DataIter):
        raise ValueError("Only supports data as a type of DataIter, while received type %s"
                         % str(type(data)))
    mod._exec_group.execs[0].set_monitor_callback(collector.collect, monitor_all=True)
    num_batches = 0
    num_examples = 0
    for batch in data:
        mod.forward(data_batch=batch, is_train=False)
        num_batches += 1
        num_examples += data.batch_size
        if max_num_examples is not None and num_examples >= max_num_examples:
            break
    if logger is not None:
        logger.info("Collected statistics from %d batches with batch_size=%d"
                    % (num_batches, data.batch_size))
    return num_examples


def _collect_layer_output_min_max(mod, data, quantized_dtype, include_layer=None,
                                  max_num_examples=None, logger=None):
    collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                            include_layer=include_layer, logger=logger)
    num_examples = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.min_max_dict, num_examples


def _collect_layer_histogram(mod, data, include_layer=None, max_num_examples=None, logger=None):
    collector = _LayerHistogramCollector(include_layer=include_layer, logger=logger)
    num_examples = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.hist_dict, num_examples


def _smooth_distribution(p, eps=0.0001):
    """Replace the zeros of a discrete distribution by ``eps``, taking the mass off the others."""
    is_zeros = (p == 0).astype(np.float32)
    is_nonzeros = (p != 0).astype(np.float32)
    n_zeros = is_zeros.sum()
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        raise ValueError("The discrete probability distribution is malformed. All entries are 0.")
    eps1 = eps * float(n_zeros) / float(n_nonzeros)
    assert eps1 < 1.0, "n_zeros=%d, n_nonzeros=%d, eps1=%f" % (n_zeros, n_nonzeros, eps1)
    hist = p.astype(np.float32)
    hist += eps * is_zeros + (-eps1) * is_nonzeros
    assert (hist <= 0).sum() == 0
    return hist


def _get_optimal_threshold(hist_data, quantized_dtype, num_quantized_bins=255):
    """(min, max, threshold, divergence) of one layer's histogram (``calibrate_entropy``)."""
    (hist, hist_edges, min_val, max_val, _) = hist_data
    num_bins = len(hist)
    assert num_bins % 2 == 1
    if min_val >= 0 and quantized_dtype in ["auto", "uint8"]:
        num_quantized_bins = num_quantized_bins * 2 + 1  # negative bins moved to positive ones
    hist = ndarray.array(hist, ctx=cpu())
    hist_edges = ndarray.array(hist_edges, ctx=cpu())
    threshold, divergence = ndarray.contrib.calibrate_entropy(
        hist=hist, hist_edges=hist_edges, num_quantized_bins=num_quantized_bins)
    return min_val, max_val, threshold.asnumpy(), divergence.asnumpy()


def _get_optimal_thresholds(hist_dict, quantized_dtype, num_quantized_bins=255, logger=None):
    """Layer name -> (min, max) thresholds minimizing the KL divergence."""
    assert isinstance(hist_dict, dict)
    if logger is not None:
        logger.info("Calculating optimal thresholds for quantization using KL divergence"
                    " with num_quantized_bins=%d" % num_quantized_bins)
    th_dict = {}
    for name in list(hist_dict.keys()):
        min_val, max_val, th, divergence = _get_optimal_threshold(
            hist_dict[name], quantized_dtype, num_quantized_bins=num_quantized_bins)
        th = float(np.asarray(th).reshape(-1)[0])
        if min_val >= 0 and quantized_dtype in ["auto", "uint8"]:
            th_dict[name] = (0, th)
        else:
            th_dict[name] = (-th, th)
        if logger:
            div = float(np.asarray(divergence).reshape(-1)[0])
            logger.debug("layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f"
                         % (name, min_val, max_val, th, div))
    return th_dict


def _load_sym(sym, logger=None):
    """A Symbol, or the path of a symbol .json file (relative to this module, as in MXNet)."""
    if isinstance(sym, str):
        cur_path = os.path.dirname(os.path.realpath(__file__))
        symbol_file_path = os.path.join(cur_path, sym)
        if logger:
            logger.info("Loading symbol from file %s" % symbol_file_path)
        return sym_load(symbol_file_path)
    if isinstance(sym, Symbol):
        return sym
    raise ValueError("_load_sym only accepts Symbol or path to the symbol file,"
                     " while received type %s" % str(type(sym)))


def _load_params(params, logger=None):
    """(arg_params, aux_params) from a .params path or a pair of dicts."""
    if isinstance(params, str):
        cur_path = os.path.dirname(os.path.realpath(__file__))
        param_file_path = os.path.join(cur_path, params)
        if logger:
            logger.info("Loading params from file %s" % param_file_path)
        save_dict = nd_load(param_file_path)
        arg_params, aux_params = {}, {}
        for k, v in save_dict.items():
            tp, name = k.split(":", 1)
            if tp == "arg":
                arg_params[name] = v
            if tp == "aux":
                aux_params[name] = v
        return arg_params, aux_params
    if isinstance(params, (tuple, list)) and len(params) == 2:
        return params[0], params[1]
    raise ValueError("Unsupported params provided. Must be either a path to the param file or"
                     " a pair of dictionaries representing arg_params and aux_params")


class _DataIterWrapper(DataIter):
    """A DataIter over a general iterable of batches (e.g. a gluon DataLoader)."""

    def __init__(self, calib_data):  # pylint: disable=super-init-not-called
        self._data = calib_data
        try:
            calib_iter = iter(calib_data)
        except TypeError as e:
            raise TypeError("calib_data is not a valid iterator. {}".format(str(e)))
        data_example = next(calib_iter)
        if isinstance(data_example, (list, tuple)):
            data_example = list(data_example)
        else:
            data_example = [data_example]
        num_data = len(data_example)
        assert num_data > 0
        if len(data_example[0].shape) > 4:
            data_example[0] = data_example[0].reshape((-1,) + data_example[0].shape[2:])
        self.provide_data = [DataDesc(name="data", shape=(data_example[0].shape))]
        self.provide_data += [DataDesc(name="data{}".format(i), shape=x.shape)
                              for i, x in enumerate(data_example[1:])]
        if num_data >= 3:
            self.provide_data = [DataDesc(name="data{}".format(i), shape=x.shape)
                                 for i, x in enumerate(data_example[0:])]
        self.provide_label = []
        self.batch_size = data_example[0].shape[0]
        self.reset()

    def reset(self):
        self._iter = iter(self._data)

    def next(self):
        next_data = next(self._iter)
        if not isinstance(next_data, (list, tuple)):
            next_data = [next_data]
        next_data = list(next_data)
        if len(next_data[0].shape) > 4:
            next_data[0] = next_data[0].reshape((-1,) + next_data[0].shape[2:])
        return DataBatch(data=next_data[:len(self.provide_data)])


def _as_data_iter(calib_data):
    """``calib_data`` as a DataIter, and its data shapes."""
    if isinstance(calib_data, DataIter):
        return calib_data, calib_data.provide_data
    calib_data = _DataIterWrapper(calib_data)
    return calib_data, calib_data.provide_data


def _check_lists(excluded_sym_names, excluded_op_names):
    if excluded_sym_names is None:
        excluded_sym_names = []
    if not isinstance(excluded_sym_names, list):
        raise ValueError("excluded_sym_names must be a list of strings representing"
                         " the names of the symbols that will not be quantized,"
                         " while received type %s" % str(type(excluded_sym_names)))
    if excluded_op_names is None:
        excluded_op_names = []
    if not isinstance(excluded_op_names, list):
        raise ValueError("excluded_op_names must be a list of strings representing"
                         " the names of the operators that will not be quantized,"
                         " while received type %s" % str(type(excluded_op_names)))
    return excluded_sym_names, excluded_op_names


def _check_dtype_granularity(quantized_dtype, quantize_granularity):
    if quantized_dtype not in ("int8", "uint8", "auto"):
        raise ValueError("unknown quantized_dtype %s received,"
                         " expected `int8`, `uint8` or `auto`" % quantized_dtype)
    if quantize_granularity not in ("tensor-wise", "channel-wise"):
        raise ValueError("unkonwn quantize_granularity %s received,"
                         " expected `tensor-wise` or `channel-wise`." % quantize_granularity)


def quantize_model(sym, arg_params, aux_params, data_names=("data",),
                   label_names=("softmax_label",), ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", calib_data=None,
                   num_calib_examples=None, quantized_dtype="int8", quantize_mode="smart",
                   quantize_granularity="tensor-wise", logger=None):
    """Quantize an FP32 model (``sym`` with its parameters) into INT8, calibrating the
    thresholds on ``calib_data`` unless ``calib_mode='none'``.

    Parameters
    ----------
    sym : str or Symbol
        The FP32 network.
    arg_params, aux_params : dict of str to NDArray
        Its parameters; the arguments are quantized offline.
    data_names, label_names : tuple of str
        The data and label names of the calibration Module.
    ctx : Context
        Where the calibration forward passes run.
    excluded_sym_names, excluded_op_names : list of str
        Node names and operator names to keep in FP32.
    calib_mode : {'none', 'naive', 'entropy'}
        'naive' takes each layer output's min/max over the calibration data; 'entropy' the
        threshold minimizing the KL divergence of its histogram; 'none' leaves the ranges to
        be computed at run time.
    calib_data : DataIter
        Calibration data (needed unless ``calib_mode='none'``).
    num_calib_examples : int, optional
        Stop after this many examples.
    quantized_dtype : {'int8', 'uint8', 'auto'}
        Type of the quantized data ('auto': uint8 where the calibrated minimum is >= 0).
    quantize_mode : {'smart', 'full'}
        'full' quantizes every quantizable operator, 'smart' only those between convolution /
        fully-connected layers.
    quantize_granularity : {'tensor-wise'}
        ('channel-wise' is not supported by neomx).
    logger : logging.Logger, optional

    Returns
    -------
    tuple
        ``(qsym, qarg_params, aux_params)``.
    """
    excluded_sym_names, excluded_op_names = _check_lists(excluded_sym_names, excluded_op_names)
    if logger:
        os.environ["MXNET_QUANTIZATION_VERBOSE"] = "1"
        logger.info("Quantizing symbol")
    _check_dtype_granularity(quantized_dtype, quantize_granularity)
    qsym, calib_layer = _quantize_symbol(sym, ctx, excluded_symbols=excluded_sym_names,
                                         excluded_operators=excluded_op_names,
                                         offline_params=list(arg_params.keys()),
                                         quantized_dtype=quantized_dtype,
                                         quantize_mode=quantize_mode,
                                         quantize_granularity=quantize_granularity)
    th_dict = {}
    if calib_mode is not None and calib_mode != "none":
        if not isinstance(ctx, Context):
            raise ValueError("currently only supports single ctx, while received %s" % str(ctx))
        if calib_data is None:
            raise ValueError("calib_data must be provided when calib_mode=%s" % calib_mode)
        if not isinstance(calib_data, DataIter):
            raise ValueError("calib_data must be of DataIter type when calib_mode=%s,"
                             " while received type %s" % (calib_mode, str(type(calib_data))))
        from ..module import Module
        mod = Module(symbol=sym, data_names=data_names, label_names=label_names, context=ctx)
        if calib_data.provide_label:
            mod.bind(for_training=False, data_shapes=calib_data.provide_data,
                     label_shapes=calib_data.provide_label)
        else:
            mod.bind(for_training=False, data_shapes=calib_data.provide_data)
        mod.set_params(arg_params, aux_params)
        if calib_mode == "entropy":
            hist_dict, num_examples = _collect_layer_histogram(
                mod, calib_data, include_layer=calib_layer, max_num_examples=num_calib_examples,
                logger=logger)
            if logger:
                logger.info("Collected layer outputs from FP32 model using %d examples"
                            % num_examples)
                logger.info("Calculating optimal thresholds for quantization")
            th_dict = _get_optimal_thresholds(hist_dict, quantized_dtype, logger=logger)
        elif calib_mode == "naive":
            th_dict, num_examples = _collect_layer_output_min_max(
                mod, calib_data, quantized_dtype, include_layer=calib_layer,
                max_num_examples=num_calib_examples, logger=logger)
            if logger:
                logger.info("Collected layer output min/max values from FP32 model using %d "
                            "examples" % num_examples)
        else:
            raise ValueError("unknown calibration mode %s received,"
                             " expected `none`, `naive`, or `entropy`" % calib_mode)
        qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info("Quantizing parameters")
    qarg_params = _aux_read_as_arguments(qsym, _quantize_params(qsym, arg_params, th_dict),
                                         aux_params)
    return qsym, qarg_params, aux_params


def quantize_graph(sym, arg_params, aux_params, ctx=cpu(), excluded_sym_names=None,
                   excluded_op_names=None, calib_mode="entropy", quantized_dtype="int8",
                   quantize_mode="full", quantize_granularity="tensor-wise",
                   LayerOutputCollector=None, logger=None):
    """Quantize ``sym`` without calibrating; returns ``(qsym, qarg_params, aux_params,
    collector)`` where ``collector`` (for ``calib_mode`` 'naive', 'entropy' or 'customize')
    is to be filled through an FP32 executor's monitor callback and passed to
    :func:`calib_graph`."""
    excluded_sym_names, excluded_op_names = _check_lists(excluded_sym_names, excluded_op_names)
    if logger:
        os.environ["MXNET_QUANTIZATION_VERBOSE"] = "1"
        logger.info("Quantizing graph")
    _check_dtype_granularity(quantized_dtype, quantize_granularity)
    qsym, calib_layer = _quantize_symbol(sym, ctx, excluded_symbols=excluded_sym_names,
                                         excluded_operators=excluded_op_names,
                                         offline_params=list(arg_params.keys()),
                                         quantized_dtype=quantized_dtype,
                                         quantize_mode=quantize_mode,
                                         quantize_granularity=quantize_granularity)
    collector = None
    if calib_mode is not None and calib_mode != "none":
        if calib_mode == "entropy":
            collector = _LayerHistogramCollector(include_layer=calib_layer, logger=logger)
        elif calib_mode == "naive":
            collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                                    include_layer=calib_layer, logger=logger)
        elif calib_mode == "customize" and LayerOutputCollector is not None:
            collector = LayerOutputCollector
        else:
            raise ValueError("unknown calibration mode %s received,"
                             " expected `none`, `naive`, `entropy` or `customize`" % calib_mode)
        if logger:
            logger.info("Collector created, please use set_monitor_callback"
                        " to collect calibration information.")
    if logger:
        logger.info("Quantizing parameters")
    qarg_params = _aux_read_as_arguments(qsym, _quantize_params(qsym, arg_params, {}), aux_params)
    return qsym, qarg_params, aux_params, collector


def calib_graph(qsym, arg_params, aux_params, collector, calib_mode="entropy",
                quantized_dtype="int8", logger=logging):
    """Calibrate a quantized Symbol from a filled collector (see :func:`quantize_graph`);
    returns ``(qsym, qarg_params, aux_params)``."""
    th_dict = {}
    if calib_mode is not None and calib_mode != "none":
        if calib_mode == "entropy":
            if logger:
                logger.info("Calculating optimal thresholds for quantization")
            th_dict = _get_optimal_thresholds(collector.hist_dict, quantized_dtype, logger=logger)
        elif calib_mode in ("naive", "customize"):
            th_dict = collector.min_max_dict
        else:
            raise ValueError("unknown calibration mode %s received,"
                             " expected `none`, `naive`, `entropy` or `customize`" % calib_mode)
        qsym = _calibrate_quantized_sym(qsym, th_dict)
    else:
        raise ValueError("please set calibration mode to naive or entropy.")
    if logger:
        logger.info("Quantizing parameters")
    qarg_params = _aux_read_as_arguments(qsym, _quantize_params(qsym, arg_params, th_dict),
                                         aux_params)
    return qsym, qarg_params, aux_params


def quantize_net_v2(network, quantized_dtype="auto", quantize_mode="full",
                    quantize_granularity="tensor-wise", exclude_layers=None,
                    exclude_layers_match=None, exclude_operators=None, calib_data=None,
                    data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                    LayerOutputCollector=None, logger=None):
    """Quantize a Gluon HybridBlock into a SymbolBlock (calibrated on ``calib_data``, an
    ``mx.io.DataIter`` or a DataLoader, unless ``calib_mode='none'``, which needs
    ``data_shapes``)."""
    from ..gluon import SymbolBlock
    from ..model import load_checkpoint
    from ..module import Module
    if logger:
        logger.info("Export HybridBlock")
    network.hybridize()
    if calib_data is not None:
        if isinstance(calib_data, DataIter):
            dshapes = calib_data.provide_data
        else:
            calib_data, dshapes = _as_data_iter(calib_data)
        if not data_shapes:
            data_shapes = dshapes
    if not data_shapes:
        raise ValueError("data_shapes required")
    data_nd = [ndarray.zeros(d.shape if isinstance(d, DataDesc) else DataDesc(*d).shape)
               for d in data_shapes]
    while True:  # trailing inputs the network does not take (a DataLoader's labels) dropped
        try:
            network(*data_nd)
        except TypeError:
            del data_nd[-1]
            if calib_data is not None and calib_data.provide_data is not data_shapes:
                del calib_data.provide_data[-1]
            del data_shapes[-1]
            continue
        else:
            break
    tmpdirname = tempfile.mkdtemp()
    try:
        prefix = os.path.join(tmpdirname, "tmp")
        network.export(prefix, epoch=0)
        symnet, args, auxs = load_checkpoint(prefix, 0)
    finally:
        shutil.rmtree(tmpdirname, ignore_errors=True)
    exclude_layers = list(exclude_layers or [])
    exclude_operators = list(exclude_operators or [])
    for name_match in exclude_layers_match or []:
        for layers in list(symnet.get_internals()):
            if layers.name.find(name_match) != -1:
                exclude_layers.append(layers.name)
    if logger:
        logger.info("These layers have been excluded %s" % exclude_layers)
    qsym, qarg_params, aux_params, collector = quantize_graph(
        sym=symnet, arg_params=args, aux_params=auxs, ctx=ctx,
        excluded_sym_names=exclude_layers, excluded_op_names=exclude_operators,
        calib_mode=calib_mode, quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
        quantize_granularity=quantize_granularity, LayerOutputCollector=LayerOutputCollector,
        logger=logger)
    if calib_mode is not None and calib_mode != "none":
        if not isinstance(ctx, Context):
            raise ValueError("currently only supports single ctx, while received %s" % str(ctx))
        if calib_data is None:
            raise ValueError("calib_data must be provided when calib_mode=%s" % calib_mode)
        if calib_mode in ["naive", "entropy", "customize"]:
            data_names = [pair[0] for pair in calib_data.provide_data]
            mod = Module(symbol=symnet, context=ctx, data_names=data_names, label_names=None)
            mod.bind(for_training=False, data_shapes=data_shapes)
            mod.set_params(args, auxs, allow_missing=False, force_init=True)
            num_examples = _collect_layer_statistics(mod, calib_data, collector,
                                                     num_calib_examples, logger)
            if logger:
                logger.info("Collected layer output values from FP32 model using %d examples"
                            % num_examples)
            qsym, qarg_params, aux_params = calib_graph(
                qsym=qsym, arg_params=args, aux_params=auxs, collector=collector,
                calib_mode=calib_mode, quantized_dtype=quantized_dtype, logger=logger)
        else:
            raise ValueError("please set calibration mode to naive or entropy.")
    else:
        data_names = [pair[0] for pair in data_shapes]
    from .. import symbol as _sym
    net = SymbolBlock(qsym, [_sym.var(name) for name in data_names])
    tmpdirname = tempfile.mkdtemp()
    try:
        param_name = os.path.join(tmpdirname, "tmpnet-quantized-0000.params")
        save_dict = {("arg:%s" % k): v.as_in_context(cpu()) for k, v in qarg_params.items()}
        save_dict.update({("aux:%s" % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
        nd_save(param_name, save_dict)
        net.collect_params().load(param_name, cast_dtype=True, dtype_source="saved")
        net.collect_params().reset_ctx(ctx)
    finally:
        shutil.rmtree(tmpdirname, ignore_errors=True)
    return net


def quantize_net(network, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None,
                 data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                 logger=None):
    """:func:`quantize_net_v2` with tensor-wise granularity (deprecated in MXNet 1.9.1)."""
    warnings.warn("WARNING: This will be deprecated after MXNet 2.0, please use quantize_net_v2.")
    return quantize_net_v2(network=network, quantized_dtype=quantized_dtype,
                           quantize_mode=quantize_mode, quantize_granularity="tensor-wise",
                           exclude_layers=exclude_layers,
                           exclude_layers_match=exclude_layers_match,
                           exclude_operators=exclude_operators, calib_data=calib_data,
                           data_shapes=data_shapes, calib_mode=calib_mode,
                           num_calib_examples=num_calib_examples, ctx=ctx,
                           LayerOutputCollector=None, logger=logger)
