"""The Examples blocks of mx.test_utils, mx.util and mx.base run as written."""
from __future__ import annotations

import doctest

import pytest

import neomx.base
import neomx.test_utils
import neomx.util

SLOW = {"neomx.test_utils.get_mnist"}  # parses the embedded digits; covered elsewhere


@pytest.mark.parametrize("module", [neomx.test_utils, neomx.util, neomx.base],
                         ids=lambda m: m.__name__)
def test_examples(module):
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    tests = [t for t in finder.find(module) if t.examples and t.name not in SLOW]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert module is neomx.util or result.attempted > 0
