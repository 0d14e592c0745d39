"""Every docstring example in chainrule_compat runs and prints what it shows."""
import pkgutil

import pytest
from docstring_runner import failed_examples

import chainrule_compat


def _modules():
    return ["chainrule_compat"] + sorted(
        info.name for info in pkgutil.walk_packages(chainrule_compat.__path__, "chainrule_compat."))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    failed = failed_examples(name)
    assert failed == 0, f"{failed} docstring example(s) failed in {name}"
