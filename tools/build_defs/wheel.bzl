"""py_wheel_dist: a wheel from py_library targets (Bazel 4.2.3 has no py_wheel).

    load("//tools/build_defs:wheel.bzl", "py_wheel_dist")
    load("//tools/build_defs:version.bzl", "CHAINRULE_VERSION")

    py_wheel_dist(
        name = "wheel",
        distribution = "chainrule-core",
        version = CHAINRULE_VERSION,
        deps = [":core"],
        requires = ["numpy>=2.0", "ml_dtypes>=0.5"],
        summary = "...",
    )

The wheel holds the Python sources (PyInfo.transitive_sources) and the data
runfiles (e.g. a pybind11 .so) of `deps` that lie under `strip_prefix`
(default: this package's folder, so core/chainrule/x.py becomes chainrule/x.py).
Files of other packages (other layers, external repositories, _solib*) are left
out: a layer names the wheels it needs in `requires` instead.

The tag is py3-none-any, or the interpreter's tag (e.g.
cp311-cp311-linux_x86_64) when a .so is inside. The wheel is byte-reproducible
(tools/build_wheel.py: sorted entries, fixed timestamps and permissions).
"""

load("@python_venv//:defs.bzl", "WHEEL_PLATFORM_TAG")

PyWheelInfo = provider(
    doc = "A wheel built by py_wheel_dist.",
    fields = {
        "distribution": "the distribution name, e.g. chainrule-core",
        "version": "the version",
        "wheel": "the .whl File",
    },
)

def _escape(name):
    # The wheel file name's distribution part (PEP 427 / binary distribution format).
    out = ""
    for c in name.elems():
        out += c if c.isalnum() or c == "." else "_"
    return out.replace(".", "_")

def _py_wheel_dist_impl(ctx):
    prefix = ctx.attr.strip_prefix
    if prefix == None or prefix == "":
        prefix = ctx.label.package + "/" if ctx.label.package else ""
    elif not prefix.endswith("/"):
        prefix += "/"

    transitive = []
    for dep in ctx.attr.deps:
        if PyInfo in dep:
            transitive.append(dep[PyInfo].transitive_sources)
        transitive.append(dep[DefaultInfo].files)
        transitive.append(dep[DefaultInfo].default_runfiles.files)
    candidates = depset(transitive = transitive).to_list()

    entries = {}
    inputs = []
    for f in candidates:
        path = f.short_path
        if path.startswith("../") or "_solib" in path or "__pycache__" in path:
            continue
        if f.extension == "pyc" or not path.startswith(prefix):
            continue
        arcname = path[len(prefix):]
        if arcname in entries:
            continue
        entries[arcname] = f.path
        inputs.append(f)
    if not entries:
        fail("%s: no files under %r in deps %s" % (ctx.label, prefix, ctx.attr.deps))

    has_native = [a for a in entries if a.endswith(".so")]
    tag = WHEEL_PLATFORM_TAG if has_native else "py3-none-any"
    wheel = ctx.actions.declare_file("%s-%s-%s.whl" % (
        _escape(ctx.attr.distribution),
        ctx.attr.version,
        tag,
    ))

    description = None
    if ctx.file.description_file:
        inputs.append(ctx.file.description_file)
        description = ctx.file.description_file.path
    spec = ctx.actions.declare_file(ctx.label.name + ".wheel.json")
    ctx.actions.write(spec, json.encode(struct(
        distribution = ctx.attr.distribution,
        version = ctx.attr.version,
        tag = tag,
        summary = ctx.attr.summary,
        requires = ctx.attr.requires,
        extras = ctx.attr.extras,
        python_requires = ctx.attr.python_requires,
        license = ctx.attr.license,
        description_file = description,
        console_scripts = ctx.attr.console_scripts,
        files = [[a, entries[a]] for a in sorted(entries)],
    )))

    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = ["--spec", spec.path, "--output", wheel.path],
        inputs = inputs + [spec],
        outputs = [wheel],
        mnemonic = "PyWheel",
        progress_message = "Building wheel %s" % wheel.short_path,
    )
    return [
        DefaultInfo(files = depset([wheel]), runfiles = ctx.runfiles(files = [wheel])),
        PyWheelInfo(distribution = ctx.attr.distribution, version = ctx.attr.version, wheel = wheel),
    ]

py_wheel_dist = rule(
    implementation = _py_wheel_dist_impl,
    doc = "A byte-reproducible wheel of the files of `deps` under `strip_prefix`.",
    attrs = {
        "distribution": attr.string(mandatory = True, doc = "e.g. chainrule-core"),
        "version": attr.string(mandatory = True),
        "deps": attr.label_list(mandatory = True, doc = "py_library targets"),
        "requires": attr.string_list(doc = "Requires-Dist lines, e.g. numpy>=2.0"),
        "extras": attr.string_list_dict(doc = "extra name -> requirements"),
        "summary": attr.string(),
        "python_requires": attr.string(default = ">=3.10"),
        "license": attr.string(),
        "description_file": attr.label(allow_single_file = True, doc = "long description (Markdown)"),
        "console_scripts": attr.string_dict(doc = "command -> module:function"),
        "strip_prefix": attr.string(doc = "default: this package's folder"),
        "_builder": attr.label(
            default = "//tools:build_wheel",
            executable = True,
            cfg = "exec",
        ),
    },
)
