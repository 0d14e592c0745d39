"""Deprecation warnings of the compat layer: once per call site, through ``warnings``
(so users can filter them or turn them into errors)."""
import sys
import warnings

_SEEN = set()    # (code object, line, message) of the call sites already warned


def warn_once(message, category, frames_up):
    """Warn ``message`` for the user's code ``frames_up`` frames above the caller of
    this function, unless that line was already warned with it.

    >>> import warnings
    >>> from chainrule_compat._warn import warn_once
    >>> def legacy_api():
    ...     warn_once("legacy_api is deprecated, use modern_api", DeprecationWarning, 1)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     for _ in range(3):
    ...         legacy_api()
    >>> len(caught)
    1
    """
    frame = sys._getframe(1)
    for _ in range(frames_up):          # a script's top level has fewer frames above it
        frame = frame.f_back or frame
    key = (frame.f_code, frame.f_lineno, message)
    if key in _SEEN:
        return
    _SEEN.add(key)
    warnings.warn(message, category, stacklevel=frames_up + 2)


def reset():
    """Forget the call sites warned so far (tests use it to start afresh).

    >>> from chainrule_compat._warn import reset
    >>> reset()
    """
    _SEEN.clear()
