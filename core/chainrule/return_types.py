"""Named tuples returned by ops with several outputs, like the reference's
``torch.return_types``: ``values, indices = cr.max(x, dim=0)`` or ``cr.max(x, 0).values``.

>>> import chainrule as cr
>>> r = cr.max(cr.tensor([[1., 5.], [7., 2.]]), dim=1)
>>> r.values.tolist(), r.indices.tolist()
([5.0, 7.0], [1, 0])
>>> isinstance(r, tuple) and type(r).__name__
'max'
"""
import collections


def _structseq(name, fields):
    """A tuple subclass with named fields and the reference's multi-line repr."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"chainrule.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__,
                                "__qualname__": name})


max = _structseq("max", ("values", "indices"))
min = _structseq("min", ("values", "indices"))
sort = _structseq("sort", ("values", "indices"))
topk = _structseq("topk", ("values", "indices"))
kthvalue = _structseq("kthvalue", ("values", "indices"))
median = _structseq("median", ("values", "indices"))
nanmedian = _structseq("nanmedian", ("values", "indices"))
cummax = _structseq("cummax", ("values", "indices"))
cummin = _structseq("cummin", ("values", "indices"))
aminmax = _structseq("aminmax", ("min", "max"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
mode = _structseq("mode", ("values", "indices"))
# linear algebra (chainrule.linalg and its top-level aliases)
linalg_slogdet = _structseq("linalg_slogdet", ("sign", "logabsdet"))
slogdet = _structseq("slogdet", ("sign", "logabsdet"))
linalg_inv_ex = _structseq("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _structseq("linalg_solve_ex", ("result", "info"))
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _structseq("linalg_qr", ("Q", "R"))
qr = _structseq("qr", ("Q", "R"))
linalg_svd = _structseq("linalg_svd", ("U", "S", "Vh"))
svd = _structseq("svd", ("U", "S", "V"))
linalg_eigh = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_lstsq = _structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_lu = _structseq("linalg_lu", ("P", "L", "U"))
linalg_lu_factor = _structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
lu_unpack = _structseq("lu_unpack", ("P", "L", "U"))
_lu_with_info = _structseq("_lu_with_info", ("LU", "pivots", "info"))
geqrf = _structseq("geqrf", ("a", "tau"))
linalg_ldl_factor = _structseq("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = _structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))
triangular_solve = _structseq("triangular_solve", ("solution", "cloned_coefficient"))


_OUT_TYPES = {}


def out_type(kind):
    """The named tuple an op given ``out=`` returns: ``kind``'s fields, named like the
    reference's (``max_out``)."""
    found = _OUT_TYPES.get(kind)
    if found is None:
        found = _OUT_TYPES[kind] = _structseq(kind.__name__ + "_out", kind._fields)
    return found
