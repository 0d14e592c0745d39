"""Padding layers: constant (and zero), reflection, replication and circular padding
of the last 1, 2 or 3 dimensions, through ``F.pad``."""
from .. import functional as F
from .module import Module

__all__ = [f"{kind}Pad{n}d" for kind in ("Constant", "Zero", "Reflection", "Replication",
                                        "Circular") for n in (1, 2, 3)]


class _PadNd(Module):
    """``padding``: an int (every side) or (left, right, top, bottom, front, back)."""

    _mode, _n = "constant", 1

    def __init__(self, padding):
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) \
            else (padding,) * (2 * self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


def _padding_class(kind, n, base, mode):
    example = {1: "cr.ones(1, 2, 3)", 2: "cr.ones(1, 2, 3, 3)", 3: "cr.ones(1, 1, 2, 3, 3)"}[n]
    args = "1, 0.5" if kind == "Constant" else "1"
    shape = {1: "[1, 2, 5]", 2: "[1, 2, 5, 5]", 3: "[1, 1, 4, 5, 5]"}[n]
    doc = (f"{kind} padding of the last {n} dimension{'s' if n > 1 else ''}.\n\n"
           f"    >>> import chainrule as cr\n"
           f"    >>> list(cr.nn.{kind}Pad{n}d({args})({example}).shape)\n    {shape}\n    ")
    return type(f"{kind}Pad{n}d", (base,), {"_mode": mode, "_n": n, "__doc__": doc,
                                            "__module__": __name__})


for _n in (1, 2, 3):
    for _kind, _base, _mode in (("Constant", _ConstantPadNd, "constant"),
                                ("Zero", _ZeroPadNd, "constant"),
                                ("Reflection", _PadNd, "reflect"),
                                ("Replication", _PadNd, "replicate"),
                                ("Circular", _PadNd, "circular")):
        globals()[f"{_kind}Pad{_n}d"] = _padding_class(_kind, _n, _base, _mode)
