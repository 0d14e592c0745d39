"""``chainrule.func.rearrange``: einops-style reordering of a tensor's elements by a
pattern such as ``"b (h w) c -> b c h w"``, as ``torch.func.rearrange`` does it.

Note [rearrange as reshape, permute, reshape]
    Each side of the pattern is a list of groups, a group a list of elementary axes
    (a bare axis is a group of one; ``()`` and ``1`` are groups of none, a unit
    dimension; ``...`` stands for the dimensions nothing else names). The input is
    reshaped from its dimensions (the left groups) to the left's elementary axes,
    permuted into the right's order of them, and reshaped to the right's groups.
    The lengths of elementary axes come from the keyword arguments and the input's
    shape (one unknown per left group, found by division).
"""
import math

import chainrule as cr

_ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"          # "..." once parsed: a single token


class DimensionBindError(Exception):
    """The axis lengths a pattern binds do not fit the tensor's shape."""


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder ``tensor``'s elements by an einops ``pattern``: transpose, reshape,
    squeeze, unsqueeze, and stack (a list of tensors is stacked first).

    >>> import chainrule as cr
    >>> from chainrule.func import rearrange
    >>> images = cr.zeros(8, 30, 40, 3)
    >>> rearrange(images, "b h w c -> b c h w").shape
    chainrule.Size([8, 3, 30, 40])
    >>> rearrange(images, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2).shape
    chainrule.Size([32, 15, 20, 3])
    """
    if not isinstance(tensor, cr.Tensor):
        tensor = cr.stack(tensor)
    left, right = _parse_pattern(pattern, axes_lengths)
    _validate(left, right, axes_lengths)
    left, right = _expand_ellipsis(left, right, tensor.ndim)
    lengths = _bind_lengths(left, tuple(tensor.shape), axes_lengths)
    axes = [a for group in left for a in group]
    order = [axes.index(a) for group in right for a in group]
    out = tensor.reshape([lengths[a] for a in axes]).permute(order)
    return out.reshape([math.prod(lengths[a] for a in group) for group in right])


# --- parsing ---------------------------------------------------------------------------
def _parse_pattern(pattern, axes_lengths):
    sides = pattern.split("->")
    if len(sides) != 2:
        raise ValueError("Pattern must contain a single '->' separator")
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left, right = (_Side(s) for s in sides)
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    return left, right


class _Side:
    """One side of a pattern: ``groups`` (lists of axis names; a bare ellipsis is the
    string itself), the set of names,
    whether it has an ellipsis (and whether inside parentheses), and whether it uses
    an anonymous axis longer than one (rearrange refuses those)."""

    def __init__(self, text):
        self.groups, self.names, self.long_anonymous = [], set(), False
        self.has_ellipsis = self.ellipsis_in_group = False
        group = None
        for token in _tokens(_ellipsis_token(text, self)):
            if token == "(":
                if group is not None:
                    raise ValueError("Axis composition is one-level (brackets inside brackets "
                                     "not allowed)")
                group = []
            elif token == ")":
                if group is None:
                    raise ValueError("Brackets are not balanced")
                self.groups.append(group)
                group = None
            else:
                self._add(token, group)
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{text}'")

    def _add(self, token, group):
        if token.isdecimal():
            if int(token) < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {int(token)}")
            self.long_anonymous |= int(token) != 1
            if group is None:
                self.groups.append([])           # a unit dimension
            return
        _check_identifier(token)
        if token in self.names:
            raise ValueError(f"Indexing expression contains duplicate dimension '{token}'")
        self.names.add(token)
        self.ellipsis_in_group |= token == _ELLIPSIS and group is not None
        if group is not None:
            group.append(token)
        else:                           # a bare ellipsis stays apart from "(...)"
            self.groups.append(token if token == _ELLIPSIS else [token])


def _ellipsis_token(text, side):
    if "." not in text:
        return text
    if "..." not in text:
        raise ValueError("Expression may contain dots only inside ellipsis (...)")
    if text.count("...") != 1 or text.count(".") != 3:
        raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                         "ellipsis for tensor ")
    side.has_ellipsis = True
    return text.replace("...", _ELLIPSIS)


def _tokens(text):
    """The names, numbers and brackets of ``text``, in order."""
    tokens, current = [], ""
    for char in text + " ":
        if char in " ()":
            if current:
                tokens.append(current)
                current = ""
            if char != " ":
                tokens.append(char)
        elif char.isalnum() or char in "_" + _ELLIPSIS:
            current += char
        else:
            raise ValueError(f"Unknown character '{char}'")
    return tokens


def _check_identifier(name):
    if name == _ELLIPSIS:
        return
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name[0] == "_" or name[-1] == "_":
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not "
                         "start or end with underscore")


def _validate(left, right, axes_lengths):
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.long_anonymous or right.long_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    one_sided = left.names ^ right.names
    if one_sided:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on "
                         f"both): {one_sided}")
    unknown = axes_lengths.keys() - left.names
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {set(unknown)}")


# --- binding lengths ---------------------------------------------------------------------
def _expand_ellipsis(left, right, ndim):
    """The groups of both sides with the ellipsis replaced by one axis per dimension it
    covers (inside a right-side group, they merge)."""
    named = len(left.groups) - left.has_ellipsis
    if left.has_ellipsis and named > ndim:
        raise ValueError(f"Number of dimensions in pattern ({named}) must be less than or "
                         f"equal to the number of dimensions in the tensor ({ndim})")
    if not left.has_ellipsis and len(left.groups) != ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left.groups)}) must be equal "
                         f"to the number of dimensions in the tensor ({ndim})")
    covered = [f"{_ELLIPSIS}{k}" for k in range(ndim - named)]

    def expand(groups):
        out = []
        for group in groups:
            if group == _ELLIPSIS:
                out += [[a] for a in covered]
            else:
                out.append([a for g in group for a in (covered if g == _ELLIPSIS else [g])])
        return out
    return expand(left.groups), expand(right.groups)


def _bind_lengths(groups, shape, axes_lengths):
    """Each elementary axis's length; at most one unknown per group (Note [rearrange as
    reshape, permute, reshape])."""
    names = {a: f"d{k}" for k, a in enumerate(a for g in groups for a in g)}
    lengths = {a: axes_lengths[a] for g in groups for a in g if a in axes_lengths}
    for group, size in zip(groups, shape):
        unknown = [a for a in group if a not in lengths]
        known = math.prod(lengths[a] for a in group if a in lengths)
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                     f"{names[unknown[0]]} and {names[unknown[1]]}")
        if unknown:
            if known == 0 or size % known:
                shown = tuple(lengths.get(a, "?") for a in group)
                raise DimensionBindError(f"inferred dimension does not evenly fit into larger "
                                         f"dimension: {size} vs {shown}")
            lengths[unknown[0]] = size // known
        elif known != size:
            pack = "(" + ", ".join(names[a] for a in group) + ("," if len(group) == 1 else "") + ")"
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when "
                                     f"matching dimension pack {pack}")
    return lengths
