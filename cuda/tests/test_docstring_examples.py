"""Every docstring example in chainrule_cuda runs and prints what it shows."""
import pkgutil

import pytest
from docstring_runner import failed_examples

import chainrule_cuda


def _modules():
    # The C libraries (libchainrule_cuda*.so) look like extension modules to pkgutil.
    return ["chainrule_cuda"] + sorted(
        info.name for info in pkgutil.walk_packages(chainrule_cuda.__path__, "chainrule_cuda.")
        if not info.name.rpartition(".")[2].startswith("lib"))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    failed = failed_examples(name)
    assert failed == 0, f"{failed} docstring example(s) failed in {name}"
