"""utils.swap_tensors and utils.hooks: what chainrule's tensor layout allows."""
import warnings

import pytest

import chainrule as cr


def test_swap_exchanges_views_and_versions():
    base = cr.zeros(4)
    view = base[1:]
    other = cr.ones(2)
    _ = other.add_(1)
    cr.utils.swap_tensors(view, other)
    assert view.tolist() == [2.0, 2.0] and view._version == 1 and view._base is None
    assert other._base is base and other.tolist() == [0.0, 0.0, 0.0]


def test_swap_tensor_with_parameter_is_refused():
    with pytest.raises(RuntimeError, match="different slots"):
        cr.utils.swap_tensors(cr.zeros(1), cr.nn.Parameter(cr.zeros(1)))


def test_non_leaf_hooks_are_found():
    y = cr.ones(1, requires_grad=True) * 2
    y.register_hook(lambda g: g)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cr.utils.hooks.warn_if_has_hooks(y)
    assert len(caught) == 1 and "will not be serialized" in str(caught[0].message)
