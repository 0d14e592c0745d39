"""EventList / FunctionEventAvg and the table in the reference's column layout."""
import chainrule as cr
from chainrule.autograd.profiler import EventList, FunctionEvent, profile


def _event(i, name, start, end):
    return FunctionEvent(i, name, thread=1, start_us=start, end_us=end)


def _events():
    outer, inner, other = _event(0, "outer", 0.0, 10.0), _event(1, "mul", 2.0, 5.0), \
        _event(2, "mul", 11.0, 12.0)
    outer.append_cpu_child(inner)
    inner.cpu_parent = outer
    return EventList([outer, inner, other])


def test_key_averages_sum_per_name():
    averages = {a.key: a for a in _events().key_averages()}
    assert averages["mul"].count == 2
    assert averages["mul"].cpu_time_total == 4.0 and averages["mul"].cpu_time == 2.0
    assert averages["outer"].self_cpu_time_total == 7.0
    assert _events().self_cpu_time_total == 11.0


def test_table_columns_and_rows():
    lines = _events().key_averages().table(sort_by="self_cpu_time_total").splitlines()
    rule, header, rule2 = lines[0], lines[1], lines[2]
    assert rule == rule2 and set(rule) == {"-", " "}
    titles = [t.strip() for t in header.split("  ") if t.strip()]
    assert titles == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                      "CPU time avg", "# of Calls"]
    first = lines[3].split()
    assert first == ["outer", "63.64%", "7.000us", "90.91%", "10.000us", "10.000us", "1"]
    assert lines[4].split()[0] == "mul" and lines[4].split()[-1] == "2"
    assert lines[-1] == "Self CPU time total: 11.000us"
    # every row lines up with the header
    assert all(len(line) == len(header) for line in lines[1:-1])


def test_table_options():
    events = _events().key_averages()
    limited = events.table(sort_by="count", row_limit=1, header="TITLE").splitlines()
    assert limited[1] == "TITLE" and limited[5].split()[0] == "mul" and len(limited) == 8
    narrow = events.table(max_name_column_width=6)
    assert "ou..." in narrow or "outer" in narrow
    ms = events.table(time_unit="ms")
    assert "0.010ms" in ms


def test_memory_shapes_and_flops_columns():
    a, b = cr.ones(2, 3), cr.ones(3, 4)
    with profile(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        cr.mm(a, b)
    table = prof.key_averages(group_by_input_shape=True).table()
    header = table.splitlines()[1]
    for title in ("CPU Mem", "Self CPU Mem", "Input Shapes", "Total FLOPs"):
        assert title in header
    row = table.splitlines()[3]
    assert "[[2, 3], [3, 4]]" in row and "32 B" in row and "48.000" in row


def test_large_flops_use_a_prefix():
    e = _event(0, "mm", 0.0, 1.0)
    e.flops = 5_000_000
    assert "Total MFLOPs" in EventList([e]).table() and "5.000" in EventList([e]).table()
