"""``emit_nvtx`` and ``emit_itt``: a range per op, backward node and
``record_function`` in NVIDIA's (NVTX v3, through the ``nvtx`` package) or Intel's
(ITT, through the ``ittapi`` package) tools.

Note [range annotations]
    A forward op's range is named ``<op>, seq=<N>``: N is the sequence number its
    backward node gets (core's Note [sequence numbers]). A backward node's range is
    ``<Node>, stashed seq=<N>``, N the number it was made with, so each backward range
    names the forward op that made it; ops run during a ``create_graph=True``
    backward carry their own ``seq=``, matched by the double backward's ``stashed
    seq=``. With ``record_shapes=True`` a forward op's range adds
    ``, sizes = [[...], [...]]``. Both libraries load the profiling tool named by an
    environment variable (NVTX_INJECTION64_PATH, INTEL_LIBITTNOTIFY64) at their first
    call; without one, a range costs next to nothing.
"""
import importlib
import warnings

from . import _state


def annotation(r, record_shapes):
    """The text of range ``r`` (Note [range annotations])."""
    name, kind, seq, shapes = r[_state.NAME], r[_state.KIND], r[_state.SEQ], r[_state.SHAPES]
    if kind in (_state.BACKWARD, _state.ENGINE):
        return f"{name}, stashed seq={seq}" if seq >= 0 else name
    if kind == _state.USER:
        return name
    text = f"{name}, seq={seq}"
    if record_shapes and shapes is not None:
        text += f", sizes = {shapes}"
    return text


class _Annotator:
    """An active emit_nvtx/emit_itt: pushes and pops its library's ranges."""

    def __init__(self, backend, record_shapes):
        self.backend, self.record_shapes = backend, record_shapes

    def push(self, r):
        self.backend.push(annotation(r, self.record_shapes))

    def pop(self, r):
        self.backend.pop()


class _Nvtx:
    def __init__(self, nvtx):
        self.push, self.pop = nvtx.push_range, nvtx.pop_range


class _Itt:
    def __init__(self, ittapi):
        native = importlib.import_module("ittapi.native")
        self._domain = native.Domain("chainrule")
        self._handle, self._begin, self._end = native.StringHandle, native.task_begin, \
            native.task_end
        self._handles = {}

    def push(self, text):
        handle = self._handles.get(text)
        if handle is None:
            handle = self._handles[text] = self._handle(text)
        self._begin(self._domain, handle)

    def pop(self):
        self._end(self._domain)


class _Emitter:
    """The shared behaviour of emit_nvtx and emit_itt."""

    _package = _backend = _what = None

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled, self.record_shapes = enabled, record_shapes
        self.entered = False
        self._annotator = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError(f"{type(self).__name__} context manager is not reentrant")
        self.entered = True
        backend = _load(self._package, self._backend, self._what)
        if backend is not None:
            self._annotator = _Annotator(backend, self.record_shapes)
            _state.activate(annotator=self._annotator)
        return self

    def __exit__(self, *exc):
        if self._annotator is not None:
            _state.deactivate(annotator=self._annotator)
            self._annotator = None
        self.entered = False
        return False


_warned = set()


def _load(package, backend, what):
    """The backend over ``package``, or None after one warning when it is missing."""
    try:
        module = importlib.import_module(package)
        return backend(module)
    except ImportError:
        if package not in _warned:
            _warned.add(package)
            warnings.warn(f"{what} needs the '{package}' package (pip install {package}); "
                          "no ranges are emitted", RuntimeWarning, stacklevel=3)
        return None


class emit_nvtx(_Emitter):
    """Context manager that makes every op and backward node emit an NVTX range
    (Note [range annotations]), for nvprof / Nsight Systems; ``load_nvprof`` reads
    the ranges back. Needs the ``nvtx`` package: without it, one warning and no
    ranges.

    >>> import chainrule as cr
    >>> from chainrule.autograd.profiler import emit_nvtx
    >>> with emit_nvtx(record_shapes=True):
    ...     y = cr.ones(2, 3) * 2
    """

    _package, _backend, _what = "nvtx", _Nvtx, "emit_nvtx"


class emit_itt(_Emitter):
    """Context manager that makes every op and backward node emit an ITT task (Note
    [range annotations]), for Intel VTune. Needs the ``ittapi`` package: without it,
    one warning and no ranges.

    >>> import chainrule as cr
    >>> from chainrule.autograd.profiler import emit_itt
    >>> with emit_itt():
    ...     y = cr.ones(2, 3) * 2
    """

    _package, _backend, _what = "ittapi", _Itt, "emit_itt"
