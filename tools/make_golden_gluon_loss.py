#!/usr/bin/env python3
"""Write MXNet 1.9.1 golden fixtures for ``mx.gluon.loss``. Run it with the real MXNet, from
the repository root::

    tools/mxnet-oracle tools/make_golden_gluon_loss.py

Output goes to ``tests/golden/gluon_loss/``: ``gluon_loss.json`` (cases, reprs, errors) and
``gluon_loss.npz`` (arrays, keys ``<id>/...``). Each case builds ``mx.gluon.loss.<cls>(**kwargs)``
and calls it on its inputs (``None`` for an input left out, e.g. CTC's ``pred_lengths``) under
``autograd.record()``, then ``backward`` with a seeded random head gradient; the inputs listed in
``grads`` have ``attach_grad()``. This is done once imperatively (``out``, ``grad/<name>``) and
once on a fresh hybridized loss (``hy_out``, ``hy_grad/<name>``; two calls, the second one's
values are kept). The npz also holds ``in/<name>`` and ``head``. Inputs come from
``np.random.RandomState`` seeded by the CRC32 of the case id. Only mxnet, numpy and the stdlib
are used.
"""
import os
from collections import OrderedDict

from _oracle_common import F32, U, err_info, golden_dir, ints, jsonable, rng_for, write_json

import numpy as np
import mxnet as mx

OUT = golden_dir('gluon_loss')
CASES = []
ERRORS = []
REPRS = OrderedDict()
ARRAYS = OrderedDict()
L = mx.gluon.loss


def _run(cls, kwargs, inputs, grads, head, hybridize, record=True):
    loss = getattr(L, cls)(**kwargs)
    if hybridize:
        loss.hybridize()
    nds = []
    for name, a in inputs:
        if a is None:
            nds.append(None)
            continue
        x = mx.nd.array(a, dtype=a.dtype)
        if name in grads:
            x.attach_grad()
        nds.append(x)
    for _ in range(2 if hybridize else 1):
        if not record:
            return loss(*nds).asnumpy(), {}
        with mx.autograd.record():
            out = loss(*nds)
        if head is None:
            return out.asnumpy(), {}
        out.backward(mx.nd.array(head))
    g = {name: x.grad.asnumpy() for (name, _), x in zip(inputs, nds) if name in grads}
    return out.asnumpy(), g


def case(cid, cls, kwargs, inputs, grads, hybrid=True, record=True):
    """``inputs``: list of (name, array or None); ``grads``: names to differentiate.
    ``record=False``: the imperative call runs outside ``autograd.record()`` (no gradients)."""
    r = rng_for(cid + '/head')
    out, _ = _run(cls, kwargs, inputs, grads, None, False, record)
    head = U(r, out.shape)
    out, g = _run(cls, kwargs, inputs, grads, head, False, record)
    rec = OrderedDict([('id', cid), ('cls', cls), ('kwargs', jsonable(kwargs)),
                       ('inputs', [[n, a is not None] for n, a in inputs]),
                       ('grads', grads), ('hybrid', hybrid), ('record', record)])
    for n, a in inputs:
        if a is not None:
            ARRAYS[f'{cid}/in/{n}'] = a
    ARRAYS[f'{cid}/head'] = head
    ARRAYS[f'{cid}/out'] = out
    for n, v in g.items():
        ARRAYS[f'{cid}/grad/{n}'] = v
    if hybrid:
        hout, hg = _run(cls, kwargs, inputs, grads, head, True)
        ARRAYS[f'{cid}/hy_out'] = hout
        for n, v in hg.items():
            ARRAYS[f'{cid}/hy_grad/{n}'] = v
    CASES.append(rec)


def error(eid, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        ERRORS.append(OrderedDict([('id', eid)] + list(err_info(e, (AssertionError, ValueError,
                                                                    AttributeError,
                                                                    mx.base.MXNetError)).items())))
    else:
        raise AssertionError(f'{eid}: no error')


def r_(cid):
    return rng_for(cid)


def regression_cases():
    for cls in ('L2Loss', 'L1Loss', 'HuberLoss'):
        cid = cls.lower()
        r = r_(cid)
        case(cid, cls, {}, [('pred', U(r, (4, 3))), ('label', U(r, (4, 3)))], ['pred', 'label'])
        cid = cls.lower() + '_weighted'
        r = r_(cid)
        case(cid, cls, {'weight': 0.5}, [('pred', U(r, (4, 3))), ('label', U(r, (12,))),
                                         ('sample_weight', U(r, (4, 1), 0, 2))],
             ['pred', 'label', 'sample_weight'])
        cid = cls.lower() + '_batch_axis1'
        r = r_(cid)
        case(cid, cls, {'batch_axis': 1}, [('pred', U(r, (3, 4, 2))),
                                           ('label', U(r, (3, 4, 2)))], ['pred'])
    r = r_('huber_rho')
    case('huber_rho', 'HuberLoss', {'rho': 0.3}, [('pred', U(r, (4, 5), -2, 2)),
                                                  ('label', U(r, (4, 5), -2, 2))], ['pred'])


def bce_cases():
    cls = 'SigmoidBinaryCrossEntropyLoss'
    for fs in (False, True):
        lo, hi = (0.05, 0.95) if fs else (-4, 4)
        for pw in (False, True):
            cid = f'bce_fs{int(fs)}_pw{int(pw)}'
            r = r_(cid)
            inputs = [('pred', U(r, (4, 5), lo, hi)), ('label', ints(r, (4, 5), 0, 2))]
            if pw:
                inputs += [('sample_weight', None), ('pos_weight', U(r, (1, 5), 0.5, 3))]
            case(cid, cls, {'from_sigmoid': fs}, inputs, ['pred', 'pos_weight'] if pw else ['pred'])
    cid = 'bce_weighted'
    r = r_(cid)
    case(cid, 'SigmoidBCELoss', {'weight': 2.0},
         [('pred', U(r, (4, 5), -3, 3)), ('label', U(r, (4, 5), 0, 1)),
          ('sample_weight', U(r, (4, 1), 0, 2))], ['pred', 'label', 'sample_weight'])


def softmax_ce_cases():
    cls = 'SoftmaxCrossEntropyLoss'
    cid = 'sce_sparse'
    r = r_(cid)
    case(cid, cls, {}, [('pred', U(r, (4, 5), -2, 2)), ('label', ints(r, (4,), 0, 5))], ['pred'])
    cid = 'sce_axis1'
    r = r_(cid)
    case(cid, cls, {'axis': 1}, [('pred', U(r, (2, 4, 3), -2, 2)),
                                 ('label', ints(r, (2, 3), 0, 4))], ['pred'])
    cid = 'sce_dense'
    r = r_(cid)
    lab = U(r, (4, 5), 0, 1)
    lab /= lab.sum(axis=1, keepdims=True)
    case(cid, cls, {'sparse_label': False}, [('pred', U(r, (4, 5), -2, 2)), ('label', lab)],
         ['pred', 'label'])
    cid = 'sce_from_logits'
    r = r_(cid)
    logp = U(r, (4, 5), -2, 2)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    case(cid, 'SoftmaxCELoss', {'from_logits': True},
         [('pred', logp.astype(F32)), ('label', ints(r, (4,), 0, 5))], ['pred'])
    cid = 'sce_weighted'
    r = r_(cid)
    case(cid, cls, {'weight': 0.7}, [('pred', U(r, (4, 5), -2, 2)),
                                     ('label', ints(r, (4,), 0, 5)),
                                     ('sample_weight', U(r, (4, 1), 0, 2))],
         ['pred', 'sample_weight'])


def kl_cases():
    cid = 'kl_logits'
    r = r_(cid)
    logp = U(r, (3, 4), -2, 2)
    logp = (logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))).astype(F32)
    lab = U(r, (3, 4), 0.05, 1)
    lab /= lab.sum(axis=1, keepdims=True)
    case(cid, 'KLDivLoss', {}, [('pred', logp), ('label', lab)], ['pred', 'label'])
    cid = 'kl_softmax'
    r = r_(cid)
    lab = U(r, (3, 4), 0.05, 1)
    lab /= lab.sum(axis=1, keepdims=True)
    case(cid, 'KLDivLoss', {'from_logits': False, 'weight': 1.5},
         [('pred', U(r, (3, 4), -2, 2)), ('label', lab), ('sample_weight', U(r, (3, 1), 0, 2))],
         ['pred'])


def ctc_cases():
    label = np.array([[1, 0, -1], [2, 1, 1]], F32)
    cid = 'ctc_ntc'
    r = r_(cid)
    case(cid, 'CTCLoss', {}, [('pred', U(r, (2, 6, 4), -2, 2)), ('label', label)], ['pred'])
    cid = 'ctc_tnc_tn'
    r = r_(cid)
    case(cid, 'CTCLoss', {'layout': 'TNC', 'label_layout': 'TN'},
         [('pred', U(r, (6, 2, 4), -2, 2)), ('label', label.T.copy())], ['pred'])
    cid = 'ctc_lengths'
    r = r_(cid)
    case(cid, 'CTCLoss', {'weight': 0.5},
         [('pred', U(r, (2, 6, 4), -2, 2)), ('label', np.array([[1, 0, 2], [2, 1, 1]], F32)),
          ('pred_lengths', np.array([5, 6], F32)), ('label_lengths', np.array([2, 3], F32)),
          ('sample_weight', np.array([1.0, 2.0], F32))], ['pred'])
    cid = 'ctc_label_lengths'
    r = r_(cid)
    case(cid, 'CTCLoss', {}, [('pred', U(r, (2, 5, 4), -2, 2)),
                              ('label', np.array([[1, 0, 2], [2, 1, 1]], F32)),
                              ('pred_lengths', None), ('label_lengths', np.array([1, 2], F32))],
         ['pred'])


def margin_cases():
    for cls in ('HingeLoss', 'SquaredHingeLoss', 'LogisticLoss'):
        cid = cls.lower()
        r = r_(cid)
        case(cid, cls, {}, [('pred', U(r, (4, 5), -2, 2)),
                            ('label', ints(r, (4, 5), 0, 2) * 2 - 1)], ['pred'])
    cid = 'hinge_margin'
    r = r_(cid)
    case(cid, 'HingeLoss', {'margin': 2, 'weight': 0.5},
         [('pred', U(r, (4, 5), -2, 2)), ('label', ints(r, (20,), 0, 2) * 2 - 1),
          ('sample_weight', U(r, (4, 1), 0, 2))], ['pred', 'sample_weight'])
    cid = 'sqhinge_margin'
    r = r_(cid)
    case(cid, 'SquaredHingeLoss', {'margin': 0.5}, [('pred', U(r, (4, 5), -2, 2)),
                                                    ('label', ints(r, (4, 5), 0, 2) * 2 - 1),
                                                    ('sample_weight', U(r, (4, 5), 0, 2))],
         ['pred'])
    cid = 'logistic_binary'
    r = r_(cid)
    case(cid, 'LogisticLoss', {'label_format': 'binary', 'weight': 3.0},
         [('pred', U(r, (4, 5), -3, 3)), ('label', ints(r, (4, 5), 0, 2)),
          ('sample_weight', U(r, (4, 1), 0, 2))], ['pred'])


def other_cases():
    cid = 'triplet'
    r = r_(cid)
    case(cid, 'TripletLoss', {}, [('pred', U(r, (4, 3))), ('positive', U(r, (4, 3))),
                                  ('negative', U(r, (4, 3)))], ['pred', 'positive', 'negative'])
    cid = 'triplet_margin'
    r = r_(cid)
    case(cid, 'TripletLoss', {'margin': 0.2, 'weight': 2.0},
         [('pred', U(r, (3, 2, 2))), ('positive', U(r, (3, 4))), ('negative', U(r, (3, 4)))],
         ['pred', 'positive', 'negative'])
    cid = 'poisson_logits'
    r = r_(cid)
    case(cid, 'PoissonNLLLoss', {}, [('pred', U(r, (4, 3))), ('target', ints(r, (4, 3), 0, 5))],
         ['pred'])
    cid = 'poisson_full'
    r = r_(cid)
    case(cid, 'PoissonNLLLoss', {'from_logits': False, 'compute_full': True, 'weight': 0.5},
         [('pred', U(r, (4, 3), 0.1, 3)), ('target', ints(r, (4, 3), 1, 6)),
          ('sample_weight', U(r, (4, 1), 0, 2))], ['pred'], hybrid=False, record=False)
    cid = 'poisson_full_zero_target'
    r = r_(cid)
    case(cid, 'PoissonNLLLoss', {'compute_full': True},
         [('pred', U(r, (2, 3))), ('target', np.array([[0, 1, 2], [3, 4, 0]], F32))], ['pred'],
         hybrid=False, record=False)
    cid = 'cosine'
    r = r_(cid)
    case(cid, 'CosineEmbeddingLoss', {}, [('input1', U(r, (4, 5))), ('input2', U(r, (4, 5))),
                                          ('label', np.array([1, -1, 1, -1], F32))],
         ['input1', 'input2'])
    cid = 'cosine_margin'
    r = r_(cid)
    case(cid, 'CosineEmbeddingLoss', {'margin': 0.2, 'weight': 0.5},
         [('input1', U(r, (4, 5))), ('input2', U(r, (4, 5))),
          ('label', np.array([[1], [-1], [-1], [1]], F32)), ('sample_weight', U(r, (4, 1), 0, 2))],
         ['input1', 'input2'])
    cid = 'sdml'
    r = r_(cid)
    case(cid, 'SDMLLoss', {}, [('x1', U(r, (4, 3))), ('x2', U(r, (4, 3)))], ['x1', 'x2'],
         hybrid=False)
    cid = 'sdml_smooth'
    r = r_(cid)
    case(cid, 'SDMLLoss', {'smoothing_parameter': 0.1, 'weight': 3.0},
         [('x1', U(r, (3, 5))), ('x2', U(r, (3, 5)))], ['x1'], hybrid=False)


def reprs():
    for cls, kw in [('L2Loss', {}), ('L1Loss', {'weight': 2}), ('SoftmaxCELoss', {'batch_axis': 1}),
                    ('CTCLoss', {'label_layout': 'TN'}), ('SDMLLoss', {})]:
        REPRS[f'{cls}({kw})'] = [cls, kw, repr(getattr(L, cls)(**kw))]


def errors():
    a = mx.nd.ones((2, 3))
    error('weight_not_number', lambda: L.L1Loss(weight='2')(a, a))
    error('ctc_layout', lambda: L.CTCLoss(layout='NCT'))
    error('ctc_label_layout', lambda: L.CTCLoss(label_layout='TT'))
    error('logistic_label_format', lambda: L.LogisticLoss(label_format='one'))

    def sdml_hybrid():
        s = L.SDMLLoss()
        s.hybridize()
        s(a, a)
    error('sdml_hybridized', sdml_hybrid)
    error('sdml_shapes', lambda: L.SDMLLoss()(a, mx.nd.ones((3, 2))))
    def poisson_full_recorded():
        x = mx.nd.ones((2, 3))
        x.attach_grad()
        with mx.autograd.record():
            L.PoissonNLLLoss(compute_full=True)(x, a * 2)
    error('poisson_full_recorded', poisson_full_recorded)

    def poisson_full_hybrid():
        p = L.PoissonNLLLoss(compute_full=True)
        p.hybridize()
        p(a, a * 2)
    error('poisson_full_hybridized', poisson_full_hybrid)
    error('l2_size_mismatch', lambda: L.L2Loss()(a, mx.nd.ones((2, 4))))


def main():
    os.makedirs(OUT, exist_ok=True)
    regression_cases()
    bce_cases()
    softmax_ce_cases()
    kl_cases()
    ctc_cases()
    margin_cases()
    other_cases()
    reprs()
    errors()
    write_json(os.path.join(OUT, 'gluon_loss.json'),
               OrderedDict([('mxnet_version', mx.__version__), ('cases', CASES),
                            ('reprs', list(REPRS.values())), ('errors', ERRORS)]))
    np.savez_compressed(os.path.join(OUT, 'gluon_loss.npz'), **ARRAYS)
    print(f'{len(CASES)} cases, {len(ERRORS)} errors, {len(ARRAYS)} arrays -> {OUT}')


if __name__ == '__main__':
    main()
