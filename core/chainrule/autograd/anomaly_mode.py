"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``.

When enabled, every node records the Python stack of the forward op that created it.
A failing backward then prints that stack (as a warning) and re-raises the original
error; with ``check_nan`` a backward that produces NaN raises, naming the node and
the index of the offending gradient.
"""
import threading
import traceback
import warnings

import numpy as np


class _AnomalyState(threading.local):
    def __init__(self):
        self.enabled = False
        self.check_nan = True


STATE = _AnomalyState()


def is_anomaly_enabled():
    return STATE.enabled


def is_anomaly_check_nan_enabled():
    return STATE.check_nan


def record_forward_trace(node):
    node._anomaly = "".join(traceback.format_stack()[:-3])


class detect_anomaly:
    """Context manager that enables anomaly detection for autograd.

    >>> import chainrule as cr
    >>> with cr.autograd.detect_anomaly():
    ...     x = cr.ones(2, requires_grad=True); (x * 2).sum().backward()
    >>> x.grad.tolist()
    [2.0, 2.0]
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (STATE.enabled, STATE.check_nan)
        STATE.enabled, STATE.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        STATE.enabled, STATE.check_nan = self.prev

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)
        return wrapped


class set_detect_anomaly:
    """Turn anomaly detection on or off; also usable as a context manager.

    >>> import chainrule as cr
    >>> _ = cr.autograd.set_detect_anomaly(False)
    """

    def __init__(self, mode, check_nan=True):
        self.prev = (STATE.enabled, STATE.check_nan)
        STATE.enabled, STATE.check_nan = mode, check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        STATE.enabled, STATE.check_nan = self.prev


def call_node(node, grads, create_graph):
    """Run a node with anomaly checks (only used while anomaly mode is on)."""
    try:
        outputs = node.apply(grads, create_graph)
    except Exception:
        if node._anomaly:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call "
                          f"that caused the error:\n{node._anomaly}", stacklevel=2)
        raise
    if STATE.check_nan:
        for i, out in enumerate(outputs):
            arr = getattr(out, "_data", out)
            if arr is not None and np.isnan(np.asarray(arr, dtype=np.complex128
                                                          if np.iscomplexobj(arr) else np.float64)).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                   f"{i}th output.")
    return outputs
