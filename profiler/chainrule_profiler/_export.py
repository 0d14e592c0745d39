"""Writing events out: Chrome trace-event JSON and collapsed stacks.

Note [chrome trace]
    The layout of the reference's (Kineto's) trace, so tools that read its traces
    read these: each event is a complete slice (``"ph": "X"``, ``ts``/``dur`` in
    microseconds from the profile's start) named by its ``trace_name`` (the
    numbered ``ProfilerStep#N``), category ``user_annotation`` for a
    ``record_function`` and ``cpu_op`` for the rest, on the track of its thread
    (``tid`` its number, one ``thread_name`` record per thread), so slices nest by
    time as the ranges nested. ``args`` carry ``External id`` (the event's id),
    ``Sequence number`` and ``Fwd thread id`` where the event has a sequence
    number, ``Input Dims`` with recorded shapes and ``Ev Idx`` (its index). A
    ``[memory]`` event (memory freed outside any range) is an instant event
    (``"ph": "i"``, category ``cpu_instant_event``) with its ``Bytes``. A forward
    op with sequence number N starts a flow (``"ph": "s"``, ``id`` N, category
    ``fwdbwd``) and the backward node with that N ends it (``"ph": "f"``, binding
    to the enclosing slice), which Perfetto and chrome://tracing draw as an arrow.
"""
import json
import os

from . import _state


def chrome_trace(events):
    """The trace-event records of ``events`` (see Note [chrome trace])."""
    pid = os.getpid()
    records, threads = [], {}
    forward_by_seq = {}
    for index, e in enumerate(events):
        threads.setdefault(e.thread, len(threads))
        records.append(_record(e, index, pid))
        if e.sequence_nr >= 0 and e.kind == _state.FORWARD:
            forward_by_seq.setdefault(e.sequence_nr, e)
    records += _flows(events, forward_by_seq, pid)
    records += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                 "args": {"name": f"thread {tid} (python)"}} for tid in threads]
    return records


def _record(e, index, pid):
    """One event's slice (an instant event for ``[memory]``)."""
    start = round(e.time_range.start, 3)
    if e.kind == "memory":
        return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": e.name, "pid": pid,
                "tid": e.thread, "ts": start,
                "args": {"Bytes": e.cpu_memory_usage, "Ev Idx": index}}
    args = {"External id": e.id, "Record function id": 0}
    if e.sequence_nr >= 0:
        args["Sequence number"] = e.sequence_nr
        args["Fwd thread id"] = e.fwd_thread
    if e.input_shapes:
        args["Input Dims"] = e.input_shapes
    if e.cpu_memory_usage:
        args["Memory (bytes)"] = e.cpu_memory_usage
    if e.flops:
        args["FLOPs"] = e.flops
    if e.stack:
        args["Call stack"] = ";".join(e.stack)
    args["Ev Idx"] = index
    return {"ph": "X", "cat": "user_annotation" if e.kind == _state.USER else "cpu_op",
            "name": e.trace_name, "pid": pid, "tid": e.thread, "ts": start,
            "dur": round(e.time_range.elapsed_us(), 3), "args": args}


def _flows(events, forward_by_seq, pid):
    """One arrow per forward op / backward node pair sharing a sequence number."""
    flows = []
    for e in events:
        if e.kind != _state.BACKWARD or e.sequence_nr < 0:
            continue
        start = forward_by_seq.get(e.sequence_nr)
        if start is None:
            continue
        common = {"name": "fwdbwd", "cat": "fwdbwd", "id": e.sequence_nr, "pid": pid}
        flows.append(dict(common, ph="s", ts=round(start.time_range.start, 3), tid=start.thread))
        flows.append(dict(common, ph="f", bp="e", ts=round(e.time_range.start, 3), tid=e.thread))
    return flows


def write_chrome_trace(events, path):
    path = os.fspath(path)
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
                   "traceEvents": chrome_trace(events), "traceName": path}, f)


_UNSAFE = str.maketrans(" ;\t\n", "____")


def write_stacks(events, path, metric):
    """``outermost;...;innermost;op value`` per event that has a stack (recorded with
    ``with_stack=True``), value = ``metric`` in whole microseconds."""
    with open(os.fspath(path), "w") as f:
        for e in events:
            value = int(getattr(e, metric))
            if not e.stack or value <= 0:
                continue
            frames = [frame.translate(_UNSAFE) for frame in reversed(e.stack)]
            f.write(";".join(frames + [e.name.translate(_UNSAFE)]) + f" {value}\n")
