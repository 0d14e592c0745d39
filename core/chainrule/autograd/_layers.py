"""The public paths of the upper layers (``chainrule.autograd.functional``, ...).

Each is a thin module here in core that imports its layer's package, or raises an
ImportError naming the wheel to install. Core never imports a layer on its own.
"""
import importlib

LAYERS = {
    "functional": ("chainrule_functional", "chainrule-functional"),
    "forward_ad": ("chainrule_forward_ad", "chainrule-forward-ad"),
    "profiler": ("chainrule_profiler", "chainrule-profiler"),
    "variable": ("chainrule_compat", "chainrule-compat"),
}


def load_layer(name, submodule=None, public=None):
    """The package of layer ``name`` (or its ``submodule``), or an ImportError that
    says what to install; ``public`` is the path the user imported (by default
    ``chainrule.autograd.<name>``)."""
    package, wheel = LAYERS[name]
    public = public or f"chainrule.autograd.{name}"
    try:
        layer = importlib.import_module(package)
    except ImportError as error:
        if error.name != package:      # the layer is there but broken: show the real cause
            raise
        raise ImportError(f"{public} needs the {wheel} wheel "
                          f"(pip install {wheel}); it provides the '{package}' package",
                          name=public) from None
    return layer if submodule is None else importlib.import_module(f"{package}.{submodule}")


def public_names(layer):
    """What a public path shows of a layer's module: the names of its ``__all__`` (the
    reference's public API; the modules it imported for itself stay out) and its
    private ones (``_name``), for code that reaches internals on purpose."""
    names = getattr(layer, "__all__", None)
    return {k: v for k, v in vars(layer).items() if not k.startswith("__") and
            (names is None or k in names or k.startswith("_"))}

