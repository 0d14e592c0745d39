"""_ops/_namespaces.py: Note [array function slot]."""
import numpy as np

from chainrule._ops import _namespaces


def test_set_array_fn_installs_and_restores():
    def loud_conj(x):
        return "installed"
    previous = _namespaces.set_array_fn("conj", loud_conj)
    try:
        assert _namespaces.ARRAY_NS.conj(np.ones(2)) == "installed"
    finally:
        assert _namespaces.set_array_fn("conj", previous) is loud_conj
    x = np.ones(2)
    assert _namespaces.ARRAY_NS.conj(x) is x


def test_python_conj_is_the_reference():
    x, z = np.arange(3.0), np.array([1 + 1j])
    assert _namespaces._conj(x) is x
    np.testing.assert_array_equal(_namespaces._conj(z), [1 - 1j])
    assert set(_namespaces.ARRAY_FN_SLOTS) <= set(dir(_namespaces.ARRAY_NS))
