"""The chainrule-migrate command (chainrule_compat/migrate/cli.py)."""
import io

from chainrule_compat.migrate.cli import main

OLD = "loss.backward(retain_variables=True)\nprint(loss.data[0])  # log\n"


def _run(*argv):
    out = io.StringIO()
    status = main(list(argv), out=out)
    return status, out.getvalue()


def test_report_then_diff_then_write(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(OLD)
    status, report = _run(str(tmp_path))
    assert status == 1 and path.read_text() == OLD
    assert f"{path}:1:1: retain_variables= -> retain_graph=" in report
    assert f"{path}:2:7: .data[0] -> .item()" in report
    status, diff = _run(str(path), "--diff")
    assert "-loss.backward(retain_variables=True)\n" in diff
    assert "+loss.backward(retain_graph=True)\n" in diff and diff.count("+++ b/") == 1
    assert path.read_text() == OLD
    assert _run(str(path), "--write")[0] == 0
    assert path.read_text() == "loss.backward(retain_graph=True)\nprint(loss.item())  # log\n"
    assert _run(str(path), "--write") == (0, "")          # twice: nothing changes


def test_what_cannot_be_rewritten_keeps_the_status(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("print(h.creator)\n")
    status, report = _run(str(path), "--write")
    assert status == 1 and "[not rewritten]" in report and path.read_text() == "print(h.creator)\n"


def test_unparseable_file_is_reported_and_skipped(tmp_path):
    bad = tmp_path / "a_bad.py"
    bad.write_text("def f(:\n    loss.backward(retain_variables=True)\n")
    good = tmp_path / "b_good.py"
    good.write_text(OLD)
    status, report = _run(str(tmp_path), "--write")
    assert status == 2 and f"{bad}:2:1: cannot parse" in report and "cannot parse, skipped" in report
    assert bad.read_text().startswith("def f(:") and "retain_graph" in good.read_text()
