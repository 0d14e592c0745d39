"""Machinery for the autograd-semantics parity tier (tests/test_parity_autograd.py).

A scenario is a function of the library module (``torch`` or ``chainrule``) that
returns a plain-Python record: nested lists/tuples/dicts of floats, ints, bools,
strings and None. Tensors are turned into nested lists with ``values``; exceptions
and warnings become ``Raised`` / ``Warned`` records that keep the type name and
whether each key phrase occurs in the message. ``compare`` walks two records and
returns the list of differences (floats compared with a tolerance).
"""
import math
import warnings


class Raised:
    """An exception seen by a scenario: its type name and the key phrases found."""

    def __init__(self, exc, phrases):
        self.type = type(exc).__name__
        self.message = str(exc)
        self.found = {p: p in self.message for p in phrases}

    def __repr__(self):
        return f"Raised({self.type}: {self.message!r})"


class Warned:
    """The warnings a block emitted: category names and the key phrases found."""

    def __init__(self, caught, phrases):
        self.categories = sorted({w.category.__name__ for w in caught})
        self.messages = [str(w.message) for w in caught]
        text = "\n".join(self.messages)
        self.found = {p: p in text for p in phrases}

    def __repr__(self):
        return f"Warned({self.categories}: {self.messages!r})"


def raises(fn, *phrases):
    """Run ``fn``; a ``Raised`` record if it raised, else ``"no error"``."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type is what we record
        return Raised(exc, phrases)
    return "no error"


def warns(fn, *phrases):
    """Run ``fn`` and record the warnings it emitted (all of them, always shown)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return Warned(caught, phrases)


def values(t):
    """A tensor's values as nested Python lists (complex as [re, im] pairs)."""
    if t is None:
        return None
    data = t.detach().tolist()
    return _split_complex(data)


def _split_complex(data):
    if isinstance(data, list):
        return [_split_complex(v) for v in data]
    if isinstance(data, complex):
        return [data.real, data.imag]
    return data


def name_of(fn):
    """A grad_fn's class name, or None."""
    return None if fn is None else type(fn).__name__


def dtype_name(dtype):
    """'float32' for torch.float32 and chainrule.float32 alike."""
    return str(dtype).split(".")[-1]


# --- comparison ---------------------------------------------------------------------

def compare(actual, expected, rtol=1e-5, atol=1e-6, path="record"):
    """Differences between two records, as human-readable strings."""
    if isinstance(expected, Raised):
        return _compare_raised(actual, expected, path)
    if isinstance(expected, Warned):
        return _compare_warned(actual, expected, path)
    if isinstance(expected, dict):
        return _compare_dicts(actual, expected, rtol, atol, path)
    if isinstance(expected, (list, tuple)):
        return _compare_sequences(actual, expected, rtol, atol, path)
    if isinstance(expected, float) and not isinstance(actual, bool) \
            and isinstance(actual, (int, float)):
        return _compare_floats(actual, expected, rtol, atol, path)
    if type(actual) is not type(expected) and not (
            isinstance(expected, int) and isinstance(actual, int)
            and not isinstance(expected, bool) and not isinstance(actual, bool)):
        return [f"{path}: chainrule {actual!r} ({type(actual).__name__}), "
                f"torch {expected!r} ({type(expected).__name__})"]
    if actual != expected:
        return [f"{path}: chainrule {actual!r}, torch {expected!r}"]
    return []


def _compare_raised(actual, expected, path):
    if not isinstance(actual, Raised):
        return [f"{path}: chainrule {actual!r}, torch {expected!r}"]
    problems = []
    if actual.type != expected.type:
        problems.append(f"{path}: chainrule raised {actual!r}, torch {expected!r}")
    for phrase, seen in actual.found.items():
        if not seen:
            problems.append(f"{path}: chainrule's message lacks {phrase!r}: {actual.message!r}")
    return problems


def _compare_warned(actual, expected, path):
    if not isinstance(actual, Warned):
        return [f"{path}: chainrule {actual!r}, torch {expected!r}"]
    problems = []
    if actual.categories != expected.categories:
        problems.append(f"{path}: chainrule warned {actual!r}, torch {expected!r}")
    for phrase, seen in actual.found.items():
        if not seen:
            problems.append(f"{path}: chainrule's warnings lack {phrase!r}: {actual.messages!r}")
    return problems


def _compare_dicts(actual, expected, rtol, atol, path):
    if not isinstance(actual, dict) or set(actual) != set(expected):
        return [f"{path}: chainrule {actual!r}, torch {expected!r}"]
    problems = []
    for key in expected:
        problems += compare(actual[key], expected[key], rtol, atol, f"{path}[{key!r}]")
    return problems


def _compare_sequences(actual, expected, rtol, atol, path):
    if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
        return [f"{path}: chainrule {actual!r}, torch {expected!r}"]
    problems = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        problems += compare(a, e, rtol, atol, f"{path}[{i}]")
    return problems


def _compare_floats(actual, expected, rtol, atol, path):
    if math.isnan(expected) and math.isnan(actual):
        return []
    if math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol):
        return []
    return [f"{path}: chainrule {actual!r}, torch {expected!r}"]


def unmatched_phrases(record, path="record"):
    """Key phrases that torch's own messages lack: a scenario written wrongly."""
    if isinstance(record, (Raised, Warned)):
        return [f"{path}: {p!r} not in torch's {record!r}"
                for p, seen in record.found.items() if not seen]
    items = (record.items() if isinstance(record, dict)
             else enumerate(record) if isinstance(record, (list, tuple)) else ())
    problems = []
    for key, value in items:
        problems += unmatched_phrases(value, f"{path}[{key!r}]")
    return problems
