"""Writes a wheel from a spec made by //tools/build_defs:wheel.bzl (stdlib only).

    build_wheel.py --spec SPEC.json --output NAME-VERSION-TAG.whl

SPEC.json: {"distribution", "version", "tag", "summary", "requires", "extras",
"python_requires", "license", "description_file", "console_scripts",
"files": [[path in wheel, path on disk], ...]}.

The wheel is byte-reproducible: entries sorted, fixed timestamps (1980-01-01)
and permissions, the .dist-info folder last with RECORD as the last entry.
"""
import argparse
import base64
import hashlib
import json
import re
import sys
import zipfile

EPOCH = (1980, 1, 1, 0, 0, 0)
GENERATOR = "chainrule tools/build_wheel.py"


def escape(name):
    return re.sub(r"[^\w\d.]+", "_", name).replace(".", "_")


def metadata_text(spec):
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + spec["distribution"],
        "Version: " + spec["version"],
    ]
    if spec.get("summary"):
        lines.append("Summary: " + spec["summary"])
    if spec.get("license"):
        lines.append("License: " + spec["license"])
    if spec.get("python_requires"):
        lines.append("Requires-Python: " + spec["python_requires"])
    for req in spec.get("requires") or []:
        lines.append("Requires-Dist: " + req)
    for extra, reqs in sorted((spec.get("extras") or {}).items()):
        lines.append("Provides-Extra: " + extra)
        for req in reqs:
            marker = 'extra == "%s"' % extra
            if ";" in req:
                base, cond = req.split(";", 1)
                lines.append("Requires-Dist: %s; (%s) and %s" % (base.strip(), cond.strip(), marker))
            else:
                lines.append("Requires-Dist: %s; %s" % (req, marker))
    text = "\n".join(lines) + "\n"
    if spec.get("description_file"):
        with open(spec["description_file"], encoding="utf-8") as f:
            body = f.read()
        text = text[:-1] + "\nDescription-Content-Type: text/markdown\n\n" + body
    return text


def wheel_text(spec, purelib):
    return (
        "Wheel-Version: 1.0\n"
        "Generator: %s\n"
        "Root-Is-Purelib: %s\n"
        "Tag: %s\n" % (GENERATOR, "true" if purelib else "false", spec["tag"])
    )


def entry_points_text(spec):
    scripts = spec.get("console_scripts") or {}
    if not scripts:
        return None
    lines = ["[console_scripts]"]
    lines += ["%s = %s" % (name, target) for name, target in sorted(scripts.items())]
    return "\n".join(lines) + "\n"


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def build(spec, output):
    dist_info = "%s-%s.dist-info" % (escape(spec["distribution"]), spec["version"])
    entries = []  # (arcname, bytes, executable)
    seen = set()
    for arcname, src in sorted(spec["files"]):
        if arcname in seen or arcname.startswith(dist_info + "/"):
            sys.exit("build_wheel: duplicate or reserved path %s" % arcname)
        seen.add(arcname)
        with open(src, "rb") as f:
            entries.append((arcname, f.read(), arcname.endswith(".so")))
    purelib = not any(executable for _, _, executable in entries)

    meta = [
        ("METADATA", metadata_text(spec)),
        ("WHEEL", wheel_text(spec, purelib)),
        ("entry_points.txt", entry_points_text(spec)),
    ]
    top_level = sorted({a.split("/", 1)[0].split(".", 1)[0] for a, _, _ in entries})
    meta.append(("top_level.txt", "\n".join(top_level) + "\n"))
    for name, text in meta:
        if text is not None:
            entries.append(("%s/%s" % (dist_info, name), text.encode("utf-8"), False))

    record_name = dist_info + "/RECORD"
    record = ["%s,%s,%d" % (a, record_hash(d), len(d)) for a, d, _ in entries]
    record.append(record_name + ",,")
    entries.append((record_name, ("\n".join(record) + "\n").encode("utf-8"), False))

    with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data, executable in entries:
            info = zipfile.ZipInfo(arcname, date_time=EPOCH)
            info.create_system = 3  # Unix, so that external_attr holds the mode
            info.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=9)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--output", required=True)
    args = ap.parse_args(argv)
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    build(spec, args.output)


if __name__ == "__main__":
    main()
