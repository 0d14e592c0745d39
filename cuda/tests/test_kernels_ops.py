"""cr_op_names: the op tables Python maps names to codes from (their order is the
code order), and the host launcher's shape (Note [kernel bodies])."""
import pytest

from kernel_abi import lib, op_codes

FAMILIES = ["unary", "binary", "ternary", "reduce", "arg_reduce", "scan", "softmax", "rng"]


@pytest.mark.parametrize("family", FAMILIES)
def test_op_names_are_unique_identifiers(family):
    names = lib.cr_op_names(family.encode()).decode().split(",")
    assert names and len(set(names)) == len(names)
    assert all(n.isidentifier() for n in names)


def test_codes_follow_the_listed_order():
    assert op_codes("binary")["add"] == 0 and op_codes("unary")["neg"] == 0
    assert list(op_codes("softmax")) == ["softmax", "log_softmax"]


def test_unknown_family_is_an_error():
    assert lib.cr_op_names(b"nope") is None
    assert b'unknown op family "nope"' in lib.cr_last_error()
