"""``python -m neomx.tools.im2rec``: image lists (``.lst``) and RecordIO datasets (``.rec`` +
``.idx``) from a folder of images, with the options of MXNet 1.9.1's ``tools/im2rec.py``.

Two steps, as MXNet's tool::

    python -m neomx.tools.im2rec --list --recursive data/train images/   # -> data/train.lst
    python -m neomx.tools.im2rec --resize 256 --num-thread 8 data/train images/
                                                   # every data/train*.lst -> .rec + .idx

``--list`` walks ``root`` (``--recursive``: one label per sub-folder, in sorted order) and
writes ``<prefix>.lst`` lines ``index\\tlabel...\\tpath`` (shuffled with seed 100 unless
``--no-shuffle``; ``--train-ratio``/``--test-ratio`` split it into ``_train``/``_val``/``_test``
lists, ``--chunks`` into ``_<i>`` parts). Without ``--list`` each ``<prefix>*.lst`` found next to
the prefix is packed: images are read with OpenCV, optionally center-cropped to a square and
resized (shorter edge), encoded (``--encoding``, ``--quality``) and written with their labels in
list order, whatever ``--num-thread`` (threads: OpenCV releases the GIL). The files are the ones
MXNet's tool makes: the same ``.lst`` bytes, and ``.rec``/``.idx`` that MXNet reads.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from ..recordio import IRHeader, MXIndexedRecordIO, _require_cv2, pack, pack_img

__all__ = ["list_images", "write_list", "make_list", "read_list", "encode_image", "write_record",
           "parse_args", "main"]


def _say(*args):
    print(*args, file=sys.stderr)


# ----------------------------------------------------------------------------- --list

def list_images(root, recursive, exts):
    """[(index, path relative to root, label)] of the image files under ``root``.

    Non-recursive: the files of ``root`` itself, label 0. Recursive: every folder (walked in
    sorted order, links followed) that holds images gets the next label, in walk order.
    """
    found = []
    if not recursive:
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            if os.path.isfile(path) and os.path.splitext(name)[1].lower() in exts:
                found.append((len(found), os.path.relpath(path, root), 0))
        return found
    labels = {}
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.splitext(name)[1].lower() in exts and os.path.isfile(path):
                label = labels.setdefault(folder, len(labels))
                found.append((len(found), os.path.relpath(path, root), label))
    for folder, label in labels.items():
        print(os.path.relpath(folder, root), label)
    return found


def write_list(path, items):
    """Writes ``(index, path, label, ...)`` items as ``.lst`` lines."""
    with open(path, 'w') as f:
        for item in items:
            labels = ''.join('%f\t' % x for x in item[2:])
            f.write('%d\t%s%s\n' % (item[0], labels, item[1]))


def make_list(args):
    """``--list``: writes ``<prefix>[_<chunk>][_train|_val|_test].lst``."""
    items = list_images(args.root, args.recursive, set(args.exts))
    if args.shuffle:
        random.Random(100).shuffle(items)
    n_chunks = max(1, args.chunks)
    chunk_size = (len(items) + n_chunks - 1) // n_chunks
    for c in range(n_chunks):
        chunk = items[c * chunk_size:(c + 1) * chunk_size]
        base = args.prefix + ('_%d' % c if n_chunks > 1 else '')
        if args.train_ratio == 1.0:
            write_list(base + '.lst', chunk)
            continue
        n_train = int(chunk_size * args.train_ratio)
        n_test = int(chunk_size * args.test_ratio)
        if args.test_ratio:
            write_list(base + '_test.lst', chunk[:n_test])
        if args.train_ratio + args.test_ratio < 1.0:
            write_list(base + '_val.lst', chunk[n_test + n_train:])
        write_list(base + '_train.lst', chunk[n_test:n_test + n_train])


# ----------------------------------------------------------------------------- packing

def read_list(path):
    """[index, path, label, ...] per valid line of an ``.lst`` (bad lines are reported and
    skipped)."""
    items = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            fields = [x.strip() for x in line.strip().split('\t')]
            if len(fields) < 3:
                if line.strip():
                    _say('%s:%d: skipped, an .lst line needs index, label(s) and path: %r'
                         % (path, lineno, line.strip()))
                continue
            try:
                items.append([int(fields[0]), fields[-1]] + [float(x) for x in fields[1:-1]])
            except ValueError as e:
                _say('%s:%d: skipped (%s)' % (path, lineno, e))
    return items


def encode_image(args, item):
    """The packed record of one ``.lst`` item, or None (reported) when it cannot be read."""
    path = os.path.join(args.root, item[1])
    label = item[2:] if args.pack_label and len(item) > 3 else item[2]
    header = IRHeader(0, label, item[0], 0)
    try:
        if args.pass_through:
            with open(path, 'rb') as f:
                return pack(header, f.read())
        cv2 = _require_cv2()
        img = cv2.imread(path, args.color)
        if img is None:
            _say('skipped %s: OpenCV cannot read it' % path)
            return None
        img = _center_crop(img) if args.center_crop else img
        if args.resize:
            h, w = img.shape[:2]
            size = (args.resize, h * args.resize // w) if h > w else \
                (w * args.resize // h, args.resize)
            img = cv2.resize(img, size)
        return pack_img(header, img, quality=args.quality, img_fmt=args.encoding)
    except Exception as e:  # one bad image must not stop the dataset
        _say('skipped %s: %s' % (path, e))
        return None


def _center_crop(img):
    h, w = img.shape[:2]
    if h > w:
        top = (h - w) // 2
        return img[top:top + w]
    left = (w - h) // 2
    return img[:, left:left + h]


def _progress(total, desc):
    """A tqdm bar on a terminal (None elsewhere, or without tqdm: then a line every 10 s)."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit='img', file=sys.stderr, dynamic_ncols=True)


def write_record(args, lst_path, working_dir):
    """Packs the items of ``lst_path`` into ``<name>.rec``/``.idx`` in ``working_dir``, in
    list order; returns (records written, items skipped)."""
    items = read_list(lst_path)
    name = os.path.splitext(os.path.basename(lst_path))[0]
    rec = MXIndexedRecordIO(os.path.join(working_dir, name + '.idx'),
                            os.path.join(working_dir, name + '.rec'), 'w')
    bar = _progress(len(items), name + '.rec') if args.progress else None
    written = skipped = 0
    start = last = time.time()
    with ThreadPoolExecutor(max(1, args.num_thread)) as pool:
        pending = deque()
        todo = iter(items)
        window = 4 * max(1, args.num_thread)
        for item in todo:
            pending.append((item, pool.submit(encode_image, args, item)))
            while len(pending) >= window or (pending and pending[0][1].done()):
                w, s = _write_one(rec, *pending.popleft())
                written, skipped = written + w, skipped + s
                if bar is not None:
                    bar.update(1)
                elif args.progress and time.time() - last > 10:
                    last = time.time()
                    _say('%s: %d/%d images' % (name, written + skipped, len(items)))
        while pending:
            w, s = _write_one(rec, *pending.popleft())
            written, skipped = written + w, skipped + s
            if bar is not None:
                bar.update(1)
    rec.close()
    if bar is not None:
        bar.close()
    _say('%s: %d records written, %d skipped, %.1f s' % (name + '.rec', written, skipped,
                                                         time.time() - start))
    return written, skipped


def _write_one(rec, item, future):
    s = future.result()
    if s is None:
        return 0, 1
    rec.write_idx(item[0], s)
    return 1, 0


# ----------------------------------------------------------------------------- command line

def _bool(text):
    if text.lower() in ('1', 'true', 'yes', 'on'):
        return True
    if text.lower() in ('0', 'false', 'no', 'off'):
        return False
    raise argparse.ArgumentTypeError('expected a boolean, got %r' % text)


def parse_args(argv=None):
    """MXNet 1.9.1's im2rec options (plus ``--shuffle [BOOL]`` of older versions and
    ``--no-progress``)."""
    p = argparse.ArgumentParser(
        prog='python -m neomx.tools.im2rec',
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description='Create an image list or make a record database by reading from an image '
                    'list')
    p.add_argument('prefix', help='prefix of input/output lst and rec files.')
    p.add_argument('root', help='path to folder containing images.')
    g = p.add_argument_group('Options for creating image lists')
    g.add_argument('--list', action='store_true',
                   help='create <prefix>.lst by walking root instead of packing <prefix>*.lst')
    g.add_argument('--exts', nargs='+', default=['.jpeg', '.jpg', '.png'],
                   help='list of acceptable image extensions.')
    g.add_argument('--chunks', type=int, default=1, help='number of chunks.')
    g.add_argument('--train-ratio', type=float, default=1.0,
                   help='Ratio of images to use for training.')
    g.add_argument('--test-ratio', type=float, default=0,
                   help='Ratio of images to use for testing.')
    g.add_argument('--recursive', action='store_true',
                   help='walk sub-folders and give each folder its own label (else only the '
                        'images of root, label 0)')
    g.add_argument('--no-shuffle', dest='shuffle', action='store_false',
                   help='keep the walk order in the .lst instead of shuffling it (seed 100)')
    g.add_argument('--shuffle', dest='shuffle', type=_bool, nargs='?', const=True,
                   help='shuffle the .lst (default; the option of older im2rec versions)')
    r = p.add_argument_group('Options for creating database')
    r.add_argument('--pass-through', action='store_true',
                   help='whether to skip transformation and save image as is')
    r.add_argument('--resize', type=int, default=0,
                   help='resize the shorter edge of image to the newsize, original images will '
                        'be packed by default.')
    r.add_argument('--center-crop', action='store_true',
                   help='specify whether to crop the center image to make it rectangular.')
    r.add_argument('--quality', type=int, default=95,
                   help='JPEG quality for encoding, 1-100; or PNG compression for encoding, 1-9')
    r.add_argument('--num-thread', type=int, default=1,
                   help='number of threads encoding images (the output order is the list '
                        'order in any case)')
    r.add_argument('--color', type=int, default=1, choices=[-1, 0, 1],
                   help='1: colour (transparency dropped), 0: grayscale, -1: as stored')
    r.add_argument('--encoding', type=str, default='.jpg', choices=['.jpg', '.png'],
                   help='specify the encoding of the images.')
    r.add_argument('--pack-label', action='store_true',
                   help='Whether to also pack multi dimensional label in the record file')
    r.add_argument('--no-progress', dest='progress', action='store_false',
                   help='no progress bar')
    p.set_defaults(shuffle=True)
    args = p.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        make_list(args)
        return 0
    working_dir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
    lists = sorted(os.path.join(working_dir, f) for f in os.listdir(working_dir)
                   if os.path.isfile(os.path.join(working_dir, f)))
    lists = [f for f in lists if f.startswith(args.prefix) and f.endswith('.lst')]
    if not lists:
        _say('Did not find any list file with prefix %s' % args.prefix)
        return 1
    for lst in lists:
        _say('Creating .rec file from %s in %s' % (lst, working_dir))
        write_record(args, lst, working_dir)
    return 0


if __name__ == '__main__':
    sys.exit(main())
