"""The Examples blocks of mx.recordio and mx.image run as written."""
from __future__ import annotations

import doctest

import pytest

import neomx.image.augment
import neomx.image.image
import neomx.recordio

from ._helpers import HAS_CV2


@pytest.mark.parametrize("module", [neomx.recordio, neomx.image.image, neomx.image.augment],
                         ids=lambda m: m.__name__)
def test_examples(module):
    if module is neomx.image.image and not HAS_CV2:
        pytest.skip("needs OpenCV: pip install neomx[image]")
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    tests = [t for t in finder.find(module) if t.examples]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted > 0
