"""``load_nvprof``: the autograd ranges of an nvprof SQLite file as FunctionEvents.

nvprof stores NVTX ranges as CUPTI marker records: a start record (flags 2, with
the range's name as an id into StringTable) and an end record (flags 4) sharing a
marker id; timestamps are in nanoseconds. Kernels launched inside a range are in
the runtime and concurrent-kernel tables, linked by correlation id; chainrule runs
no kernels of its own, so kernels are attached when the file has them.
"""
import sqlite3

from .events import EventList, FunctionEvent

_MARKERS = """
SELECT start.id AS marker_id, start.name AS name, start.timestamp AS start_time,
       end.timestamp AS end_time, start.objectId AS object_id
FROM CUPTI_ACTIVITY_KIND_MARKER AS start
JOIN CUPTI_ACTIVITY_KIND_MARKER AS end
  ON start.id = end.id AND end.flags = 4 AND start.flags = 2
ORDER BY start.timestamp
"""


def load_nvprof(path):
    """Open an nvprof trace file and parse the autograd annotations in it (the
    ranges ``emit_nvtx`` made), as an EventList.

    >>> import os, sqlite3, tempfile
    >>> from chainrule.autograd.profiler import load_nvprof
    >>> path = os.path.join(tempfile.mkdtemp(), "t.prof")
    >>> db = sqlite3.connect(path)
    >>> _ = db.execute("CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT)")
    >>> _ = db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, "
    ...                "flags INT, timestamp INT, id INT, objectKind INT, objectId BLOB, "
    ...                "name INT, domain INT)")
    >>> _ = db.execute("INSERT INTO StringTable VALUES (1, 'mul, seq=3')")
    >>> _ = db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER VALUES (?,?,?,?,?,?,?,?)",
    ...                    [(1, 2, 1000, 7, 2, b"", 1, 0), (2, 4, 5000, 7, 2, b"", 0, 0)])
    >>> db.commit(); db.close()
    >>> [(e.name, e.sequence_nr, e.cpu_time_total) for e in load_nvprof(path)]
    [('mul', 3, 4.0)]
    """
    return EventList(parse_nvprof_trace(path))


def parse_nvprof_trace(path):
    """The FunctionEvents of the file's NVTX ranges (see load_nvprof)."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        strings = {row["_id_"]: row["value"] for row in conn.execute("SELECT * FROM StringTable")}
        events = [_event(i, row, strings) for i, row in enumerate(conn.execute(_MARKERS))]
        _attach_kernels(conn, events, strings)
    finally:
        conn.close()
    return events


def _event(index, row, strings):
    name, seq = split_annotation(strings.get(row["name"], str(row["name"])))
    return FunctionEvent(index, name, thread=_thread(row["object_id"]),
                         start_us=row["start_time"] / 1e3, end_us=row["end_time"] / 1e3,
                         sequence_nr=seq, kind="backward" if "stashed" in
                         strings.get(row["name"], "") else "forward")


def split_annotation(text):
    """``'mul, seq=3, sizes = ...'`` -> ('mul', 3): the op's name and sequence number
    (-1 without one), from emit_nvtx's annotation."""
    parts = [p.strip() for p in text.split(",")]
    seq = -1
    for p in parts[1:]:
        key, _, value = p.partition("=")
        if key.strip() in ("seq", "stashed seq") and value.strip().lstrip("-").isdigit():
            seq = int(value)
    return parts[0], seq


def _thread(object_id):
    """nvprof's objectId blob: process id then thread id, 4 bytes each."""
    if isinstance(object_id, (bytes, bytearray)) and len(object_id) >= 8:
        return int.from_bytes(object_id[4:8], "little")
    return 0


def _attach_kernels(conn, events, strings):
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"} <= tables:
        return
    query = ("SELECT r.start AS launch, k.start AS start, k.end AS end, k.name AS name "
             "FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL k "
             "ON r.correlationId = k.correlationId")
    for row in conn.execute(query):
        launch = row["launch"] / 1e3
        owner = [e for e in events if e.time_range.start <= launch <= e.time_range.end]
        if owner:
            owner[-1].kernels.append((strings.get(row["name"], str(row["name"])),
                                      row["start"] / 1e3, row["end"] / 1e3))
