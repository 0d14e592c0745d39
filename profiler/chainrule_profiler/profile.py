"""``chainrule.autograd.profiler.profile`` and ``record_function``."""
import functools
import warnings

from . import _state
from .events import EventList, FunctionEvent


class profile:
    """Context manager that records every op, backward node and ``record_function``
    range run inside it, with CPU times (Note [profiler observation] in _state.py).

    Like the reference's profiler it is thread local: it records the thread that
    entered it (the backward passes it starts run there too). ``use_kineto=True``
    records every thread, as ``chainrule.profiler.profile`` does. There is no device
    timing: ``use_cuda``/``use_device`` are accepted and record CPU events.

    >>> import chainrule as cr
    >>> from chainrule.autograd.profiler import profile
    >>> x = cr.randn(1, 1, requires_grad=True)
    >>> with profile() as prof:
    ...     for _ in range(3):
    ...         y = x ** 2
    ...         y.backward()
    >>> for avg in prof.key_averages():
    ...     print(avg.key, avg.count)
    aten::pow 3
    autograd::engine::evaluate_function: PowBackward0 3
    PowBackward0 3
    autograd::engine::evaluate_function: torch::autograd::AccumulateGrad 3
    torch::autograd::AccumulateGrad 3
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, use_mtia=False, experimental_config=None,
                 acc_events=False, custom_trace_id_callback=None):
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
        self.enabled = enabled
        self.use_device = "cuda" if use_cuda else use_device
        self.record_shapes, self.with_flops = record_shapes, with_flops
        self.profile_memory, self.with_stack = profile_memory, with_stack
        self.with_modules, self.use_kineto, self.use_cpu = with_modules, use_kineto, use_cpu
        self.experimental_config = experimental_config
        self.entered = False
        self.function_events = None
        self._collector = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._collector = _state.Collector(
            record_shapes=self.record_shapes, profile_memory=self.profile_memory,
            with_stack=self.with_stack, with_flops=self.with_flops,
            all_threads=self.use_kineto)
        _state.activate(self._collector)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        _state.deactivate(self._collector)
        self.function_events = build_events(self._collector)
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events averaged per name (see EventList.key_averages)."""
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events as a text table (see EventList.table)."""
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path):
        """Write a Chrome trace-event JSON file (see Note [chrome trace])."""
        self._check_finish()
        self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write collapsed stacks for flame-graph tools (needs ``with_stack=True``)."""
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.function_events.export_stacks(path, metric)

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self CPU time, in microseconds."""
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def total_average(self):
        """One FunctionEventAvg over every event."""
        self._check_finish()
        return self.function_events.total_average()

    def __str__(self):
        self._check_finish()
        return str(self.function_events)

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished chainrule.autograd.profiler.profile>"
        return repr(self.function_events)


def build_events(collector):
    """The collector's ranges as FunctionEvents: ids 1, 2, ... in start order, times
    relative to the profile's start, children and parents within this profile."""
    S = _state
    ranges = sorted(collector.ranges, key=lambda r: (r[S.START], -r[S.END]))
    t0 = collector.start_ns
    shapes_kept, stack_kept = collector.record_shapes, collector.with_stack
    memory_kept, flops_kept = collector.profile_memory, collector.with_flops
    by_range = {}
    events = EventList(profile_memory=memory_kept, with_flops=flops_kept,
                       record_shapes=shapes_kept, with_stack=stack_kept)
    for i, r in enumerate(ranges, 1):
        name, kind, view, _, seq, start, end, shapes, stack, memory, flops, _ = r
        e = FunctionEvent(
            i, _table_name(name) if kind is S.USER else name, view.number,
            (start - t0) / 1e3, (end - t0) / 1e3, trace_name=name,
            input_shapes=shapes if shapes_kept else None,
            stack=stack if stack_kept else None, scope=_SCOPES.get(kind, 0),
            cpu_memory_usage=memory if memory_kept else 0, sequence_nr=seq,
            flops=flops if flops_kept else None, kind=kind)
        by_range[id(r)] = e
        events.append(e)
    for r in ranges:
        _link_parent(r, by_range)
    events.extend(_memory_events(collector, len(events) + 1))
    _set_forward_threads(events)
    return events


# FunctionEvent.scope as the reference numbers its RecordScopes: 0 for an op (and the
# engine's evaluate_function range), 1 for a backward node, 7 for a user's range.
_SCOPES = {_state.BACKWARD: 1, _state.USER: 7}


def _table_name(name):
    """The name the events list shows: each ``ProfilerStep#N`` as ``ProfilerStep*``,
    one row for all steps (the trace keeps the numbered name, ``trace_name``)."""
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


def _link_parent(r, by_range):
    parent = r[_state.PARENT]
    while parent is not None and id(parent) not in by_range:
        parent = parent[_state.PARENT]  # a range this profile did not record
    if parent is not None:
        child = by_range[id(r)]
        child.cpu_parent = by_range[id(parent)]
        child.cpu_parent.append_cpu_child(child)


def _memory_events(collector, first_id):
    """Frees that happened outside any range, as zero-length ``[memory]`` events."""
    t0 = collector.start_ns
    return [FunctionEvent(first_id + i, "[memory]", thread, (ns - t0) / 1e3, (ns - t0) / 1e3,
                          cpu_memory_usage=-nbytes, kind="memory")
            for i, (ns, thread, nbytes) in enumerate(collector.frees)]


def _set_forward_threads(events):
    """``fwd_thread``: for a backward node and its evaluate_function range, the thread
    of the forward op with its number (its own thread when that op ran before the
    profile); 0 for every other event, as in the reference."""
    forward = {e.sequence_nr: e.thread for e in events
               if e.kind == _state.FORWARD and e.sequence_nr >= 0}
    for e in events:
        paired = e.kind in (_state.BACKWARD, _state.ENGINE) and e.sequence_nr >= 0
        e.fwd_thread = forward.get(e.sequence_nr, e.thread) if paired else 0


class record_function:
    """A named range around a block of code, as a context manager or a decorator: the
    ops inside nest under it in the active profiles (and NVTX/ITT ranges). A no-op
    when nothing is profiling.

    >>> import chainrule as cr
    >>> from chainrule.autograd.profiler import profile, record_function
    >>> with profile() as prof:
    ...     with record_function("scale"):
    ...         y = cr.ones(2) * 3
    >>> [(e.name, [c.name for c in e.cpu_children]) for e in prof.function_events]
    [('scale', ['aten::mul']), ('aten::mul', [])]
    """

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._range = None

    def __enter__(self):
        self._range = _state.open_range(self.name, _state.USER)
        if self._range is not None:
            self._range[_state.ARGS] = self.args
        return self

    def __exit__(self, *exc):
        r, self._range = self._range, None
        _state.close_range(r)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        return wrapped
