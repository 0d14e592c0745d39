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


def load_layer(name):
    """The package of layer ``name``, or an ImportError that says what to install."""
    package, wheel = LAYERS[name]
    try:
        return importlib.import_module(package)
    except ImportError as error:
        if error.name != package:      # the layer is there but broken: show the real cause
            raise
        raise ImportError(f"chainrule.autograd.{name} needs the {wheel} wheel "
                          f"(pip install {wheel}); it provides the '{package}' package",
                          name=f"chainrule.autograd.{name}") from None
