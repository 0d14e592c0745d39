"""Runs a module's docstring examples (core's test_docstrings.py and the layers' tests)."""
import doctest
import importlib


def failed_examples(name):
    """How many docstring examples of module ``name`` fail."""
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name, globs={}):
        runner.run(test)
    return runner.summarize(verbose=False).failed
