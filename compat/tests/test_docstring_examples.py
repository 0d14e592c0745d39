"""Every docstring example in chainrule_compat runs and prints what it shows."""
import doctest
import importlib
import pkgutil

import pytest

import chainrule_compat


def _modules():
    return ["chainrule_compat"] + sorted(
        info.name for info in pkgutil.walk_packages(chainrule_compat.__path__,
                                                    "chainrule_compat."))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name, globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
