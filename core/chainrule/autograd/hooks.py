"""Hook handles shared by tensor, node and multi-grad hooks."""
import itertools

_hook_ids = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*hook``; ``.remove()`` unregisters the hook
    (also from inside a running hook). Usable as a context manager.

    >>> import chainrule as cr
    >>> x = cr.ones(1, requires_grad=True)
    >>> with x.register_hook(lambda g: g * 10):
    ...     pass
    >>> x.sum().backward(); x.grad.tolist()
    [1.0]
    """

    __slots__ = ("_table", "id")

    def __init__(self, table, fn):
        self.id = next(_hook_ids)
        self._table = table
        table[self.id] = fn

    def remove(self):
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
