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
    "func": ("chainrule_functional.func", "chainrule-functional"),
}
PUBLIC_PATHS = {"func": "chainrule.func"}      # the others: chainrule.autograd.<name>


def load_layer(name):
    """The package of layer ``name``, or an ImportError that says what to install."""
    package, wheel = LAYERS[name]
    try:
        return importlib.import_module(package)
    except ImportError as error:
        top = package.split(".")[0]
        if error.name not in (package, top):  # the layer is there but broken: show the cause
            raise
        public = PUBLIC_PATHS.get(name, f"chainrule.autograd.{name}")
        raise ImportError(f"{public} needs the {wheel} wheel (pip install {wheel}); it "
                          f"provides the '{top}' package", name=public) from None
