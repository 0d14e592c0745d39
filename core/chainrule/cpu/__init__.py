"""``chainrule.cpu``: the reference's ``torch.cpu`` (the CPU as a device module, and
its deprecated ``amp`` spellings).

>>> import chainrule as cr
>>> cr.cpu.is_available(), cr.cpu.device_count()
(True, 1)
"""
from . import amp  # noqa: F401


def is_available():
    """Always True: the CPU is always there.

    >>> import chainrule as cr
    >>> cr.cpu.is_available()
    True
    """
    return True


def device_count():
    """Always 1.

    >>> import chainrule as cr
    >>> cr.cpu.device_count()
    1
    """
    return 1


def current_device():
    """Always ``"cpu"``.

    >>> import chainrule as cr
    >>> cr.cpu.current_device()
    'cpu'
    """
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for on the CPU.

    >>> import chainrule as cr
    >>> cr.cpu.synchronize()
    """
