"""Golden values for partial shape inference: MXNet 1.9.1's ``infer_shape`` and
``infer_shape_partial`` on graphs with unknown (0) dimensions and shape attributes.

Run inside the oracle, from the repository root::

    tools/mxnet-oracle tools/make_golden_partial_infer.py

Writes ``tests/golden/infer/partial.json``: per case the code building ``sym``, the method, its
keyword shapes, and MXNet's result (``[args, outs, aux]`` with unknown shapes as ``null`` for
``infer_shape`` failures, ``()`` as ``[]``) or its error. Cases where MXNet 1.9.1 fails an
internal ``tuple.h`` check on a partial shape (FullyConnected/dot/SliceChannel with unknown
inner dimensions) are left out: neomx leaves those shapes unknown instead.
"""
import os
import warnings

from _oracle_common import err_info, fresh_scopes, golden_dir, jsonable, write_json

import mxnet as mx  # noqa: F401  (the code strings use it)

V = "mx.sym.Variable"
CASES = [
    # a complete shape given to infer_shape wins over a variable's shape attribute; a partial
    # one is replaced by the attribute
    ("override", f"sym = mx.sym.relu({V}('a', shape=(3, 4)))", "infer_shape", {"a": (5, 6)}),
    ("override_partial", f"sym = mx.sym.relu({V}('a', shape=(3, 4)))", "infer_shape_partial",
     {"a": (5, 6)}),
    ("attr_only", f"sym = mx.sym.relu({V}('a', shape=(3, 4)))", "infer_shape", {}),
    ("attr_beats_partial", f"sym = mx.sym.FullyConnected({V}('a', shape=(0, 10)), num_hidden=5, "
     "name='fc')", "infer_shape_partial", {"a": (4, 0)}),
    ("mlp_partial", f"sym = mx.sym.FullyConnected({V}('a', shape=(0, 10)), num_hidden=5, name='fc')",
     "infer_shape", {}),
    ("mlp_partial_p", f"sym = mx.sym.FullyConnected({V}('a', shape=(0, 10)), num_hidden=5, "
     "name='fc')", "infer_shape_partial", {}),
    ("mlp2_p", f"sym = mx.sym.FullyConnected(mx.sym.Activation(mx.sym.FullyConnected({V}('a'), "
     "num_hidden=8, name='f1'), act_type='relu'), num_hidden=3, name='f2')", "infer_shape_partial",
     {"a": (0, 10)}),
    ("fc_noflat", f"sym = mx.sym.FullyConnected({V}('a'), num_hidden=5, flatten=False, name='fc')",
     "infer_shape_partial", {"a": (0, 3, 10)}),
    ("fc_from_output", f"sym = mx.sym.Concat({V}('x'), mx.sym.FullyConnected({V}('a'), "
     "num_hidden=4, name='f'), dim=1)", "infer_shape_partial", {"x": (6, 2), "a": (0, 5)}),
    ("concat", f"sym = mx.sym.Concat({V}('x', shape=(2, 3)), {V}('b', shape=(2, 0)), dim=1)",
     "infer_shape", {}),
    ("concat_p", f"sym = mx.sym.Concat({V}('x', shape=(2, 3)), {V}('b', shape=(2, 0)), dim=1)",
     "infer_shape_partial", {}),
    ("concat_completes", f"sym = mx.sym.Concat({V}('x', shape=(0, 3)), {V}('y', shape=(2, 4)), "
     "dim=1)", "infer_shape", {}),
    ("concat_3", f"sym = mx.sym.Concat({V}('x'), {V}('y'), {V}('z'), dim=1)",
     "infer_shape_partial", {"x": (2, 3), "y": (0, 4), "z": (2, 0)}),
    ("concat_dim0", f"sym = mx.sym.Concat({V}('x'), {V}('y'), dim=0)", "infer_shape_partial",
     {"x": (0, 3), "y": (2, 0)}),
    ("concat_unknown_input", f"sym = mx.sym.Concat({V}('x'), {V}('y'), dim=1)",
     "infer_shape_partial", {"x": (2, 3)}),
    ("concat_no_backwards", f"sym = mx.sym.Concat({V}('x'), {V}('y'), dim=1) + {V}('z')",
     "infer_shape_partial", {"x": (2, 3), "y": (2, 0), "z": (2, 7)}),
    ("concat_unknown_conflict", f"sym = mx.sym.Concat({V}('x'), {V}('y'), dim=1) + {V}('z')",
     "infer_shape_partial", {"x": (2, 3), "z": (2, 7)}),
    ("slice", f"sym = mx.sym.SliceChannel({V}('d', shape=(0, 6)), num_outputs=3)", "infer_shape", {}),
    ("slice_p", f"sym = mx.sym.SliceChannel({V}('d', shape=(0, 6)), num_outputs=3)",
     "infer_shape_partial", {}),
    ("conv", f"sym = mx.sym.Convolution({V}('data', shape=(0, 3, 8, 8)), kernel=(3, 3), "
     "num_filter=4, name='conv')", "infer_shape", {}),
    ("conv_p", f"sym = mx.sym.Convolution({V}('data', shape=(0, 3, 8, 8)), kernel=(3, 3), "
     "num_filter=4, name='conv')", "infer_shape_partial", {}),
    ("conv_channels_unknown", f"sym = mx.sym.Convolution({V}('d'), kernel=(3, 3), num_filter=4, "
     "name='c')", "infer_shape_partial", {"d": (2, 0, 8, 8)}),
    ("conv_weight_given", f"sym = mx.sym.Convolution({V}('d'), kernel=(3, 3), num_filter=4, "
     "name='c')", "infer_shape_partial", {"d": (2, 0, 8, 8), "c_weight": (4, 3, 3, 3)}),
    ("conv_hw_unknown", f"sym = mx.sym.Convolution({V}('d'), kernel=(3, 3), num_filter=4, "
     "name='c')", "infer_shape_partial", {"d": (2, 3, 0, 8)}),
    ("pool", f"sym = mx.sym.Pooling({V}('d'), kernel=(2, 2), stride=(2, 2), pool_type='max')",
     "infer_shape_partial", {"d": (0, 3, 8, 8)}),
    ("global_pool", f"sym = mx.sym.Pooling({V}('d'), global_pool=True, kernel=(1, 1), "
     "pool_type='avg')", "infer_shape_partial", {"d": (0, 3, 5, 5)}),
    ("add", f"sym = {V}('x') + {V}('y', shape=(4, 5))", "infer_shape", {}),
    ("add_p", f"sym = {V}('x') + {V}('y')", "infer_shape_partial", {"x": (0, 3), "y": (2, 0)}),
    ("broadcast_2", f"sym = mx.sym.broadcast_add({V}('x'), {V}('y'))", "infer_shape_partial",
     {"x": (0, 3), "y": (2, 1)}),
    ("broadcast_3", f"sym = mx.sym.broadcast_add({V}('x'), {V}('y'))", "infer_shape_partial",
     {"x": (0, 3), "y": (2, 0)}),
    ("broadcast_4", f"sym = mx.sym.broadcast_add({V}('x'), {V}('y'))", "infer_shape_partial",
     {"x": (0, 1), "y": (1, 4)}),
    ("broadcast_5", f"sym = mx.sym.broadcast_add({V}('x'), {V}('y'))", "infer_shape_partial",
     {"x": (5, 1), "y": (0, 4)}),
    ("reshape", f"sym = mx.sym.Reshape({V}('x'), shape=(-1, 6))", "infer_shape_partial",
     {"x": (0, 2, 3)}),
    ("reshape_copy", f"sym = mx.sym.Reshape({V}('x'), shape=(0, -1))", "infer_shape_partial",
     {"x": (4, 0, 3)}),
    ("flatten", f"sym = mx.sym.Flatten({V}('x'))", "infer_shape_partial", {"x": (0, 2, 3)}),
    ("flatten_inner", f"sym = mx.sym.Flatten({V}('x'))", "infer_shape_partial", {"x": (4, 0, 3)}),
    ("batchnorm", f"sym = mx.sym.BatchNorm({V}('x'), name='bn')", "infer_shape_partial",
     {"x": (0, 3, 4, 4)}),
    ("batchnorm_c", f"sym = mx.sym.BatchNorm({V}('x'), name='bn')", "infer_shape_partial",
     {"x": (2, 0, 4, 4)}),
    ("activation", f"sym = mx.sym.Activation({V}('x'), act_type='relu')", "infer_shape_partial",
     {"x": (0, 3)}),
    ("softmax_output", f"sym = mx.sym.SoftmaxOutput({V}('x'), name='so')", "infer_shape_partial",
     {"x": (0, 10)}),
    ("regression_output", f"sym = mx.sym.LinearRegressionOutput({V}('x'), name='l')",
     "infer_shape_partial", {"x": (0, 3)}),
    ("embedding", f"sym = mx.sym.Embedding({V}('x'), input_dim=10, output_dim=4, name='e')",
     "infer_shape_partial", {"x": (0, 7)}),
    ("transpose", f"sym = mx.sym.transpose({V}('x'), axes=(1, 0, 2))", "infer_shape_partial",
     {"x": (0, 3, 4)}),
    ("sum", f"sym = mx.sym.sum({V}('x'), axis=1)", "infer_shape_partial", {"x": (0, 3, 4)}),
    ("sum_keepdims", f"sym = mx.sym.sum({V}('x'), axis=1, keepdims=True)", "infer_shape_partial",
     {"x": (2, 0, 4)}),
    ("where", f"sym = mx.sym.where({V}('c'), {V}('x'), {V}('y'))", "infer_shape_partial",
     {"c": (0, 3), "x": (2, 0), "y": (0, 0)}),
    ("expand_dims", f"sym = mx.sym.expand_dims({V}('x'), axis=1)", "infer_shape_partial",
     {"x": (0, 3)}),
    ("slice_axis", f"sym = mx.sym.slice_axis({V}('x'), axis=1, begin=0, end=2)",
     "infer_shape_partial", {"x": (0, 3)}),
    ("tile", f"sym = mx.sym.tile({V}('x'), reps=(2, 1))", "infer_shape_partial", {"x": (0, 3)}),
    ("tile_inner", f"sym = mx.sym.tile({V}('x'), reps=(2, 1))", "infer_shape_partial",
     {"x": (2, 0)}),
    ("broadcast_to", f"sym = mx.sym.broadcast_to({V}('x'), shape=(4, 0))", "infer_shape_partial",
     {"x": (1, 3)}),
    ("stack", f"sym = mx.sym.stack({V}('x'), {V}('y'), axis=0)", "infer_shape_partial",
     {"x": (0, 3), "y": (2, 0)}),
    ("stack_unknown_input", f"sym = mx.sym.stack({V}('x'), {V}('y'), axis=1)",
     "infer_shape_partial", {"x": (0, 3)}),
    ("stack_no_backwards", f"sym = mx.sym.stack({V}('x'), {V}('y'), axis=1) + {V}('z')",
     "infer_shape_partial", {"z": (4, 2, 3)}),
    ("unknown", f"sym = mx.sym.relu({V}('q'))", "infer_shape", {}),
    ("unknown_p", f"sym = mx.sym.relu({V}('q'))", "infer_shape_partial", {}),
]


def main():
    records = []
    for cid, code, method, kwargs in CASES:
        rec = {"id": cid, "code": code, "method": method, "kwargs": jsonable(kwargs)}
        with fresh_scopes():
            ns = {"mx": mx}
            exec(code, ns)
            sym = ns["sym"]
            rec["arguments"] = sym.list_arguments()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = getattr(sym, method)(**kwargs)
                rec["result"] = [None if part is None else [list(s) for s in part] for part in res]
            except mx.base.MXNetError as e:
                rec.update(err_info(e))
        records.append(rec)
    out = os.path.join(golden_dir("infer"), "partial.json")
    write_json(out, {"mxnet_version": mx.__version__, "generator": "tools/make_golden_partial_infer.py",
                     "cases": records})
    print(f"wrote {len(records)} cases to {out}")


if __name__ == "__main__":
    main()
