import pytest

import chainrule_compat


@pytest.fixture(autouse=True)
def fresh_call_sites():
    """Each test sees its first warnings (they are once per call site)."""
    chainrule_compat.reset_warnings()
    yield
