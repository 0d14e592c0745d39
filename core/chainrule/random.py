"""``chainrule.random``: the default generator's seeding and state, and ``fork_rng``.

>>> import chainrule as cr
>>> with cr.random.fork_rng():
...     _ = cr.manual_seed(0)
...     a = cr.rand(1)
>>> cr.random.initial_seed() >= 0
True
"""
import contextlib

from ._random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: F401
                      manual_seed, seed, set_rng_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Within the block random draws do not change the generators' state afterwards:
    the CPU generator's state (and, with chainrule-cuda, the devices') is saved on entry
    and restored on exit.

    >>> import chainrule as cr
    >>> _ = cr.manual_seed(1)
    >>> with cr.random.fork_rng():
    ...     _ = cr.rand(3)
    >>> after_fork = cr.rand(1)
    >>> _ = cr.manual_seed(1)
    >>> bool(cr.equal(after_fork, cr.rand(1)))
    True
    """
    if not enabled:
        yield
        return
    cpu_state = get_rng_state()
    device_states = _device_states(devices)
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for restore in device_states:
            restore()


def _device_states(devices):
    from . import cuda
    if not cuda.is_available() or not hasattr(cuda, "get_rng_state"):
        return []                  # no per-device generator state to keep
    indices = range(cuda.device_count()) if devices is None else \
        [getattr(d, "index", d) for d in devices]
    return [(lambda i=i, s=cuda.get_rng_state(i): cuda.set_rng_state(s, i)) for i in indices]


__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]
