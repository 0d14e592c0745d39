import warnings

import pytest

from chainrule_compat._warn import reset, warn_once


def _legacy():
    warn_once("legacy; use modern", DeprecationWarning, 1)


def test_once_per_call_site_and_filterable():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            _legacy()
        _legacy()                      # another line: warns again
    assert [w.lineno for w in caught][0] != caught[1].lineno and len(caught) == 2
    reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match="use modern"):
            _legacy()
