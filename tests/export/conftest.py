import pytest

from . import _models


@pytest.fixture(scope="module")
def resnet18_model(tmp_path_factory):
    return _models.resnet18(tmp_path_factory.mktemp("resnet18"))
