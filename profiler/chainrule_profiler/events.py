"""The results of a profile: FunctionEvent, FunctionEventAvg and EventList, with the
reference's fields, averages and table layout. Times are in microseconds."""
import itertools
import math

from . import _export


class Interval:
    """A [start, end] time range in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent:
    """One recorded op, backward node or ``record_function`` range.

    >>> from chainrule.autograd.profiler import FunctionEvent
    >>> e = FunctionEvent(0, "mul", thread=1, start_us=0.0, end_us=3.0)
    >>> e.cpu_time_total, e.self_cpu_time_total, e.key
    (3.0, 3.0, 'mul')
    """

    def __init__(self, id, name, thread, start_us, end_us, fwd_thread=None,
                 input_shapes=None, stack=None, scope=0, cpu_memory_usage=0,
                 sequence_nr=-1, flops=None, is_async=False, trace_name=None,
                 device_type="cpu", node_id=-1, is_legacy=False, kind="forward"):
        self.id, self.name, self.thread = id, name, thread
        self.time_range = Interval(start_us, end_us)
        self.fwd_thread = fwd_thread
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.scope, self.cpu_memory_usage = scope, cpu_memory_usage
        self.sequence_nr, self.flops = sequence_nr, flops
        self.is_async, self.trace_name = is_async, trace_name or name
        self.device_type, self.node_id, self.is_legacy = device_type, node_id, is_legacy
        self.kind = kind                   # forward, backward (a node) or user
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.kernels = []

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"seq_nr={self.sequence_nr}>")


class FunctionEventAvg:
    """The sum of the events that share a key (``key_averages``): totals, counts and
    the average ``cpu_time``.

    >>> from chainrule.autograd.profiler import FunctionEvent, FunctionEventAvg
    >>> avg = FunctionEventAvg()
    >>> avg.add(FunctionEvent(0, "mul", 1, 0.0, 4.0)).add(FunctionEvent(1, "mul", 1, 5.0, 7.0))
    <FunctionEventAvg key=mul count=2 self_cpu_time=6.000us cpu_time=3.000us input_shapes=[]>
    """

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.flops = 0
        self.input_shapes = None
        self.stack = None
        self.node_id = -1
        self.is_legacy = False
        self.is_async = False
        self.cpu_parent = None
        self.cpu_children = None
        self.device_time_total = self.self_device_time_total = 0.0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes, self.stack = other.input_shapes, other.stack
            self.node_id, self.is_legacy = other.node_id, other.is_legacy
            self.cpu_parent, self.cpu_children = other.cpu_parent, other.cpu_children
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.flops += other.flops or 0
        return self

    __iadd__ = add

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes or []}>")


class EventList(list):
    """A list of FunctionEvents (or their averages) with the reference's views."""

    def __init__(self, *args, profile_memory=False, with_flops=False, record_shapes=False,
                 with_stack=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory, self._with_flops = profile_memory, with_flops
        self._record_shapes, self._with_stack = record_shapes, with_stack

    def _like(self, items):
        return EventList(items, profile_memory=self._profile_memory, with_flops=self._with_flops,
                         record_shapes=self._record_shapes, with_stack=self._with_stack)

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times (every microsecond counted once)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One FunctionEventAvg per name (and input shapes, and the innermost
        ``group_by_stack_n`` stack frames, when asked), in first-seen order."""
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes) if group_by_input_shape else None,
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else None)
            groups.setdefault(key, FunctionEventAvg()).add(e)
        averages = self._like(groups.values())
        for avg in averages:
            avg.stack = avg.stack[:group_by_stack_n] if group_by_stack_n > 0 else []
            if not group_by_input_shape:
                avg.input_shapes = []
        return averages

    def total_average(self):
        """A FunctionEventAvg over every event, keyed ``Total``."""
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The events as the reference's text table (see _format_table)."""
        return format_table(self, sort_by, row_limit, max_name_column_width,
                            max_shapes_column_width, max_src_column_width, header,
                            top_level_events_only, time_unit, self._profile_memory)

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace-event JSON (Perfetto, chrome://tracing)."""
        _export.write_chrome_trace(self, path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write collapsed stacks (``frame;frame;op value`` lines) for flame graphs."""
        _export.write_stacks(self, path, metric)

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total"]


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_time_share(us, total):
    return f"{us * 100.0 / total:.2f}%" if total > 0 else "NaN"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    for limit, unit in ((gb, "Gb"), (mb, "Mb"), (kb, "Kb")):
        if abs(nbytes) >= limit:
            return f"{nbytes / limit:.2f} {unit}"
    return f"{nbytes} B"


def _flops_scale(events):
    """The unit for the FLOPs column: the largest prefix that keeps the smallest
    nonzero count at or above 1, like the reference."""
    counts = [e.flops for e in events if e.flops]
    if not counts:
        return 1, "FLOPs"
    power = max(0, min(int(math.log10(min(counts)) // 3), 5))
    return 10.0 ** (-3 * power), ["", "K", "M", "G", "T", "P"][power] + "FLOPs"


def format_table(events, sort_by, row_limit, name_width, shapes_width, src_width, header,
                 top_level_only, time_unit, profile_memory=False):
    """The reference's column layout: Name, Self CPU %, Self CPU, CPU total %, CPU total,
    CPU time avg, [CPU Mem, Self CPU Mem], # of Calls, [Input Shapes],
    [Source Location], [Total FLOPs]; then the self CPU time total."""
    events = list(events)
    if top_level_only:
        events = [e for e in events if e.cpu_parent is None]
    if sort_by is not None:
        events.sort(key=lambda e: getattr(e, sort_by.replace("cuda", "device")), reverse=True)
    if row_limit is not None and row_limit > 0:
        events = events[:row_limit]
    shown = _columns(events, name_width, shapes_width, src_width, profile_memory)
    lines = []
    rule = "  ".join("-" * w for _, w, _ in shown) + "  "
    if header is not None:
        lines += ["=" * len(rule), header]
    lines += [rule, "  ".join(title.rjust(w) for title, w, _ in shown) + "  ", rule]
    for e in events:
        lines += _rows(e, shown, time_unit)
    total = sum(e.self_cpu_time_total for e in events) if events else 0.0
    lines += [rule, f"Self CPU time total: {_in_unit(total, time_unit)}"]
    return "\n".join(lines) + "\n"


def _in_unit(us, unit):
    if unit == "s":
        return f"{us / 1e6:.3f}s"
    if unit == "ms":
        return f"{us / 1e3:.3f}ms"
    if unit == "us":
        return f"{us:.3f}us"
    return _format_time(us)


def _columns(events, name_width, shapes_width, src_width, profile_memory):
    """(title, width, cell function) of each column this table shows."""
    total = sum(e.self_cpu_time_total for e in events) or 0.0
    longest = max([len(e.key) for e in events] + [4]) + 4
    name_width = min(longest, name_width if name_width else longest)
    cols = [("Name", name_width, lambda e, u: _clip(e.key, name_width)),
            ("Self CPU %", 12, lambda e, u: _format_time_share(e.self_cpu_time_total, total)),
            ("Self CPU", 12, lambda e, u: _in_unit(e.self_cpu_time_total, u)),
            ("CPU total %", 12, lambda e, u: _format_time_share(e.cpu_time_total, total)),
            ("CPU total", 12, lambda e, u: _in_unit(e.cpu_time_total, u)),
            ("CPU time avg", 12, lambda e, u: _in_unit(e.cpu_time, u))]
    if profile_memory or any(e.cpu_memory_usage for e in events):
        cols += [("CPU Mem", 12, lambda e, u: _format_memory(e.cpu_memory_usage)),
                 ("Self CPU Mem", 12, lambda e, u: _format_memory(e.self_cpu_memory_usage))]
    cols.append(("# of Calls", 12, lambda e, u: str(e.count)))
    if any(e.input_shapes for e in events):
        width = min(shapes_width, max(len(str(e.input_shapes)) for e in events) + 4)
        cols.append(("Input Shapes", width, lambda e, u: _clip(str(e.input_shapes), width)))
    if any(e.stack for e in events):
        cols.append(("Source Location", src_width,
                     lambda e, u: _clip(e.stack[0] if e.stack else "", src_width)))
    if any(e.flops for e in events):
        scale, unit = _flops_scale(events)
        cols.append((f"Total {unit}", 12,
                     lambda e, u: f"{e.flops * scale:8.3f}" if e.flops else "--"))
    return cols


def _rows(e, shown, unit):
    """The event's row, then one row per further stack frame (up to 5), like the
    reference's Source Location column."""
    rows = ["  ".join(cell(e, unit).rjust(w) for _, w, cell in shown) + "  "]
    if any(title == "Source Location" for title, _, _ in shown):
        for frame in itertools.islice(e.stack or [], 1, 5):
            cells = [_clip(frame, w) if title == "Source Location" else ""
                     for title, w, _ in shown]
            rows.append("  ".join(c.rjust(w) for c, (_, w, _) in zip(cells, shown)) + "  ")
    return rows


def _clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."
