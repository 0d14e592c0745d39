"""Writing events out: Chrome trace-event JSON and collapsed stacks.

Note [chrome trace]
    Each event is a complete slice (``"ph": "X"``, ``ts``/``dur`` in microseconds)
    on the track of its thread (``tid``; one ``thread_name`` metadata record per
    thread), so slices nest by time on their track as the ranges nested. A forward
    op with sequence number N starts a flow (``"ph": "s"``, ``id`` N, category
    ``fwdbwd``) and the backward node with that N ends it (``"ph": "f"``, binding to
    the enclosing slice), which Perfetto and chrome://tracing draw as an arrow.
"""
import json
import os

_PID = "CPU functions"


def chrome_trace(events):
    """The trace-event records of ``events`` (see Note [chrome trace])."""
    records, threads = [], {}
    forward_by_seq = {}
    for e in events:
        threads.setdefault(e.thread, len(threads))
        start, dur = e.time_range.start, e.time_range.elapsed_us()
        args = {"Sequence number": e.sequence_nr, "kind": e.kind}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.cpu_memory_usage:
            args["Memory (bytes)"] = e.cpu_memory_usage
        if e.flops:
            args["FLOPs"] = e.flops
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        records.append({"name": e.name, "ph": "X", "cat": e.kind, "ts": round(start, 3),
                        "dur": round(dur, 3), "pid": _PID, "tid": e.thread, "args": args})
        if e.sequence_nr >= 0 and e.kind == "forward":
            forward_by_seq.setdefault(e.sequence_nr, e)
    records += _flows(events, forward_by_seq)
    records += [{"name": "thread_name", "ph": "M", "pid": _PID, "tid": tid,
                 "args": {"name": f"thread {n} ({tid})"}} for tid, n in threads.items()]
    return records


def _flows(events, forward_by_seq):
    """One arrow per forward op / backward node pair sharing a sequence number."""
    flows = []
    for e in events:
        if e.kind != "backward" or e.sequence_nr < 0:
            continue
        start = forward_by_seq.get(e.sequence_nr)
        if start is None:
            continue
        common = {"name": "fwdbwd", "cat": "fwdbwd", "id": e.sequence_nr, "pid": _PID}
        flows.append(dict(common, ph="s", ts=round(start.time_range.start, 3), tid=start.thread))
        flows.append(dict(common, ph="f", bp="e", ts=round(e.time_range.start, 3), tid=e.thread))
    return flows


def write_chrome_trace(events, path):
    with open(os.fspath(path), "w") as f:
        json.dump({"traceEvents": chrome_trace(events), "displayTimeUnit": "ms"}, f)


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
