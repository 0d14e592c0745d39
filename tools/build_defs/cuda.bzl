"""CUDA with nvcc in Bazel 4.2.3 (rules_cuda lives on GitHub, unreachable offline).

    # WORKSPACE
    load("//tools/build_defs:cuda_configure.bzl", "local_cuda_repository")
    local_cuda_repository(name = "local_cuda")

    # BUILD
    load("@local_cuda//:defs.bzl", "CUDA_FOUND", "CUDA_TARGET_COMPATIBLE")
    load("//tools/build_defs:cuda.bzl", "nvcc_objects")

    nvcc_objects(name = "gpu_objects", srcs = [...], hdrs = [...], includes = ["cuda/csrc"])
    cc_binary(
        name = "libx.so",
        srcs = [":gpu_objects"],
        deps = ["@local_cuda//:cudart_static"],
        linkshared = True,
        target_compatible_with = CUDA_TARGET_COMPATIBLE,
    )

@local_cuda finds nvcc ($CHAINRULE_NVCC, $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc,
/usr/local/cuda-13.0/bin/nvcc, then PATH). Without it, CUDA_FOUND is False and
CUDA_TARGET_COMPATIBLE names a constraint value no platform has, so the CUDA targets
are incompatible and `bazel build/test //...` skips them (Debian's platforms package
has no @platforms//:incompatible). Keep CUDA rules in this one file, so that a move
to the published rule sets is a one-place change.
"""

load("@local_cuda//:defs.bzl", "CUDA_INCLUDE", "CUDA_TARGET_COMPATIBLE", "NVCC")

# nvcc flags of both the Bazel rule and cuda/tools/build.sh (BUILD-FACTS.md, CUDA):
# sm_90 code plus compute_90 PTX for later GPUs.
NVCC_FLAGS = [
    "-x",
    "cu",
    "-std=c++17",
    "-O2",
    "-Xcompiler",
    "-fPIC",
    "-Xcompiler",
    "-fvisibility=hidden",
    "-ccbin",
    "/usr/bin/gcc",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

def _nvcc_objects_impl(ctx):
    outputs = []
    includes = []
    for inc in ctx.attr.includes:
        includes += ["-I", inc, "-I", ctx.bin_dir.path + "/" + inc]
    for inc in [ctx.attr.cuda_include, ctx.attr.cuda_include + "/cccl"]:
        includes += ["-I", inc]
    for src in ctx.files.srcs:
        obj = ctx.actions.declare_file("_nvcc/%s/%s.pic.o" % (ctx.label.name, src.short_path))
        ctx.actions.run(
            executable = ctx.attr.nvcc,
            arguments = NVCC_FLAGS + ctx.attr.copts + includes + ["-c", src.path, "-o", obj.path],
            inputs = [src] + ctx.files.hdrs,
            outputs = [obj],
            env = {"PATH": "/usr/bin:/bin"},
            mnemonic = "Nvcc",
            progress_message = "nvcc %s" % src.short_path,
        )
        outputs.append(obj)
    return [DefaultInfo(files = depset(outputs))]

_nvcc_objects = rule(
    implementation = _nvcc_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cc", ".cu"]),
        "hdrs": attr.label_list(allow_files = True),
        "includes": attr.string_list(doc = "include folders, relative to the workspace"),
        "copts": attr.string_list(),
        "nvcc": attr.string(mandatory = True),
        "cuda_include": attr.string(mandatory = True),
    },
)

def nvcc_objects(name, srcs, hdrs = [], includes = [], copts = [], **kwargs):
    """Compiles each of `srcs` with nvcc (-x cu, sm_90 + PTX) into a PIC object for
    a cc_binary's or cc_library's srcs. Needs @local_cuda (local_cuda_repository)."""
    _nvcc_objects(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        includes = includes,
        copts = copts,
        nvcc = NVCC,
        cuda_include = CUDA_INCLUDE,
        target_compatible_with = CUDA_TARGET_COMPATIBLE,
        **kwargs
    )
