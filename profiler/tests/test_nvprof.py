"""load_nvprof reads an nvprof SQLite file (built here in nvprof's schema)."""
import sqlite3

from chainrule.autograd.profiler import load_nvprof

SCHEMA = [
    "CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL)",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY AUTOINCREMENT, "
    "flags INT NOT NULL, timestamp INT NOT NULL, id INT NOT NULL, objectKind INT NOT NULL, "
    "objectId BLOB NOT NULL, name INT NOT NULL, domain INT NOT NULL)",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (_id_ INTEGER PRIMARY KEY AUTOINCREMENT, "
    "cbid INT NOT NULL, start INT NOT NULL, end INT NOT NULL, processId INT NOT NULL, "
    "threadId INT NOT NULL, correlationId INT NOT NULL, returnValue INT NOT NULL)",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (_id_ INTEGER PRIMARY KEY "
    "AUTOINCREMENT, start INT NOT NULL, end INT NOT NULL, correlationId INT NOT NULL, "
    "name INT NOT NULL)",
]


def _object_id(pid, tid):
    return pid.to_bytes(4, "little") + tid.to_bytes(4, "little")


def _write(path):
    db = sqlite3.connect(path)
    for statement in SCHEMA:
        db.execute(statement)
    strings = ["mul, seq=3, sizes = [[2], [2]]", "MulBackward0, stashed seq=3", "k_mul"]
    db.executemany("INSERT INTO StringTable (value) VALUES (?)", [(s,) for s in strings])
    marker = "INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (flags, timestamp, id, objectKind, " \
             "objectId, name, domain) VALUES (?, ?, ?, 2, ?, ?, 0)"
    obj = _object_id(100, 7)
    db.executemany(marker, [(2, 1_000, 1, obj, 1), (4, 4_000, 1, obj, 0),
                            (2, 10_000, 2, obj, 2), (4, 12_500, 2, obj, 0)])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (cbid, start, end, processId, "
               "threadId, correlationId, returnValue) VALUES (1, 2000, 2500, 100, 7, 9, 0)")
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (start, end, correlationId, "
               "name) VALUES (5000, 6000, 9, 3)")
    db.commit()
    db.close()


def test_load_nvprof(tmp_path):
    path = str(tmp_path / "trace.prof")
    _write(path)
    events = load_nvprof(path)
    assert [(e.name, e.sequence_nr, e.kind, e.thread) for e in events] == [
        ("mul", 3, "forward", 7), ("MulBackward0", 3, "backward", 7)]
    assert [e.cpu_time_total for e in events] == [3.0, 2.5]
    assert events[0].kernels == [("k_mul", 5.0, 6.0)]
    assert {a.key: a.count for a in events.key_averages()} == {"mul": 1, "MulBackward0": 1}
