#include "ops.h"

#include <string.h>

#include <string>

#include "common.h"

namespace cr {

#define CR_NAME(name, kinds, out) #name,
#define CR_KINDS(name, kinds, out) (unsigned char)(kinds),
#define CR_OUTS(name, kinds, out) (unsigned char)(out),
#define CR_FAMILY(fam, LIST)                                                       \
  static const char* const fam##_names[] = {LIST(CR_NAME)};                        \
  static const unsigned char fam##_kinds[] = {LIST(CR_KINDS)};                     \
  static const unsigned char fam##_outs[] = {LIST(CR_OUTS)};
CR_FAMILY(unary, CR_UNARY_OPS)
CR_FAMILY(binary, CR_BINARY_OPS)
CR_FAMILY(ternary, CR_TERNARY_OPS)
CR_FAMILY(reduce, CR_REDUCE_OPS)
CR_FAMILY(arg_reduce, CR_ARG_REDUCE_OPS)
CR_FAMILY(scan, CR_SCAN_OPS)
CR_FAMILY(softmax, CR_SOFTMAX_OPS)
CR_FAMILY(rng, CR_RNG_OPS)
#undef CR_FAMILY

#define CR_ENTRY(fam) {#fam, (int)(sizeof fam##_names / sizeof fam##_names[0]), \
                       fam##_names, fam##_kinds, fam##_outs}
static const OpFamily kFamilies[] = {
    CR_ENTRY(unary), CR_ENTRY(binary), CR_ENTRY(ternary), CR_ENTRY(reduce),
    CR_ENTRY(arg_reduce), CR_ENTRY(scan), CR_ENTRY(softmax), CR_ENTRY(rng)};

const OpFamily* op_family(const char* family) {
  for (const OpFamily& f : kFamilies)
    if (family && !strcmp(f.family, family)) return &f;
  return nullptr;
}

int dtype_kind(int dt) {
  if (dt == CR_COMPLEX64 || dt == CR_COMPLEX128) return K_CPLX;
  if (dt >= CR_FLOAT16 && dt <= CR_FLOAT64) return K_FLOAT;
  return K_INT;
}

static int real_dtype(int dt) {
  return dt == CR_COMPLEX64 ? CR_FLOAT32 : dt == CR_COMPLEX128 ? CR_FLOAT64 : dt;
}

int check_op(const char* family, int op, int in_dtype, int* out_dtype) {
  const OpFamily* f = op_family(family);
  if (op < 0 || op >= f->count) return fail("%s op code %d is out of range", family, op);
  if (!(f->kinds[op] & dtype_kind(in_dtype)))
    return fail("\"%s\" not implemented for '%s'", f->names[op], dtype_name(in_dtype));
  int o = f->outs[op];
  *out_dtype = o == O_BOOL ? CR_BOOL : o == O_REAL ? real_dtype(in_dtype) : in_dtype;
  return 0;
}

}  // namespace cr

extern "C" const char* cr_op_names(const char* family) {
  static std::string joined[sizeof cr::kFamilies / sizeof cr::kFamilies[0]];
  const cr::OpFamily* f = cr::op_family(family);
  if (!f) { cr::fail("unknown op family \"%s\"", family ? family : "(null)"); return nullptr; }
  std::string& s = joined[f - cr::kFamilies];
  if (s.empty())
    for (int i = 0; i < f->count; ++i) s += (i ? "," : "") + std::string(f->names[i]);
  return s.c_str();
}
