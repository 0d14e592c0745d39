"""Note [read-only saved arrays]

NumPy lets anyone who holds an array write to it, bypassing version counters. The
arrays a user can hold are those handed out (``Tensor.numpy()``, ``__array__``) or
handed in (``from_numpy``, ``as_tensor``); their tensors are marked *exported*. When
such a tensor is saved for backward, its array (and its root base's) is made
read-only until the last saved reference is gone, so a write through the user's
handle fails loudly instead of silently corrupting gradients. chainrule's own
in-place ops lift the lock for their write (they bump the version, which backward
checks). Limitation: a handle taken with ``.numpy()`` *after* the tensor was saved is
not locked retroactively (the version check cannot see writes through it either).
"""
import threading

from .._tensor import memory_root

_LOCKS = {}                 # id(array) -> [array, number of saved references]
_MUTEX = threading.Lock()


def _arrays(tensor):
    """The tensor's array, preceded by its root base's when it is a view."""
    root = memory_root(tensor)
    return [tensor._data] if root is tensor else [root._data, tensor._data]


def mark_exported(tensor):
    memory_root(tensor)._extras().exported = True


def is_exported(tensor):
    extra = memory_root(tensor)._extra
    return extra is not None and extra.exported


def lock_arrays(tensor):
    """Make the tensor's array and its root base's read-only; returns what was locked."""
    locked = []
    with _MUTEX:
        for arr in _arrays(tensor):
            entry = _LOCKS.get(id(arr))
            if entry is not None:
                entry[1] += 1
            elif arr.flags.writeable:
                arr.setflags(write=False)     # (twice as fast as the flags attribute)
                _LOCKS[id(arr)] = [arr, 1]
            else:
                continue
            locked.append(arr)
    return locked


def unlock_arrays(arrays):
    with _MUTEX:
        for arr in arrays:           # root first: a view can only be writeable after it
            entry = _LOCKS.get(id(arr))
            if entry is None:
                continue
            entry[1] -= 1
            if entry[1] == 0:
                del _LOCKS[id(arr)]
                _set_writeable(arr, True)


# Note [unlock slot]
#     LockedSavedTensor.__del__ runs once per locked saved tensor (every step of a
#     training loop whose input was handed in) and unlocks through ``_unlocker``,
#     which a layer may replace (the C++ engine installs a C implementation of
#     ``unlock_arrays``). ``unlock_arrays`` stays the reference and the default; a
#     replacement must leave ``_LOCKS`` and the arrays' flags exactly as it would.
_unlocker = unlock_arrays


def set_unlocker(fn):
    """Unlock slot: install ``fn(arrays)`` in place of ``unlock_arrays`` (None restores
    it); returns the previous one."""
    global _unlocker
    previous = _unlocker
    _unlocker = unlock_arrays if fn is None else fn
    return previous


def _set_writeable(arr, flag):
    try:
        arr.setflags(write=flag)
    except ValueError:       # its base is still locked by another saved reference
        pass


class unlocked_for_inplace:
    """Lift the lock of a tensor's arrays for one of chainrule's in-place writes."""

    def __init__(self, tensor):
        arrays = _arrays(tensor)
        self.arrays = [a for a in arrays if not a.flags.writeable
                       and (id(a) in _LOCKS or id(arrays[0]) in _LOCKS)]

    def __enter__(self):
        for arr in self.arrays:
            _set_writeable(arr, True)

    def __exit__(self, *exc):
        for arr in reversed(self.arrays):
            _set_writeable(arr, False)
