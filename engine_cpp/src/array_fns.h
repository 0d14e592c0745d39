// ARRAY_NS helpers in C (core's Note [array function slot], _ops/_namespaces.py).
//
// `conj` is called by nearly every VJP formula on the fast backward; for a real
// array it returns its argument. In Python that is a frame and two attribute reads
// (~0.1 µs); here it is a type check. It mirrors `_namespaces._conj`
// (`np.conj(x) if x.dtype.kind == "c" else x`) for ndarrays and NumPy scalars and
// calls the Python function for anything else, so errors are the same. Installed
// while `_conj` has the fingerprint it was written against (chainrule_engine/_mirror.py).
#pragma once

#include "python_api.h"

namespace chainrule_engine {

// `expand` is every reduction's backward (`unreduce`): `np.broadcast_to` builds its
// read-only view through Python code and an nditer (~1.3 µs); here it is one array
// constructor. It mirrors `_namespaces._expand` for an ndarray and a tuple of ints
// that broadcast, with NumPy's strides (0 for new and size-1 dimensions), and calls
// the Python function for anything else (NumPy's errors).

// Hand over `_namespaces._conj` and `_namespaces._expand` (the fallbacks) and `np.conj`.
void configure_array_fns(PyObject* python_conj, PyObject* np_conj, PyObject* python_expand);

// conj(x): a METH_O function.
PyObject* array_conj(PyObject* self, PyObject* x);

// expand(x, shape): a METH_FASTCALL function.
PyObject* array_expand(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

}  // namespace chainrule_engine
