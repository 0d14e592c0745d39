/* A test tool for emit_nvtx: an NVTX v3 injection library.
 *
 * NVTX v3 (header only, compiled into whatever emits ranges) loads the library named
 * by NVTX_INJECTION64_PATH at the first NVTX call and calls its
 * InitializeInjectionNvtx2, which fills in the function pointers of the calls it
 * wants. This one takes the range push/pop calls (plain and per domain) and appends
 * "push <message>" / "pop" lines to the file named by CHAINRULE_NVTX_RECORD, for the
 * tests to read back.
 *
 * The few ABI values are those of nvtx3/nvtxDetail/nvtxTypes.h, written out here so
 * the tool builds without a CUDA toolkit. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*FunctionPointer)(void);
typedef FunctionPointer** FunctionTable;
typedef struct {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, FunctionTable* table, unsigned int* size);
} ExportTableCallbacks;
typedef const void* (*GetExportTable)(uint32_t id);

enum { ETID_CALLBACKS = 1, MODULE_CORE = 1, MODULE_CORE2 = 5 };
enum { CORE_RANGE_PUSH_EX = 8, CORE_RANGE_PUSH_A = 9, CORE_RANGE_POP = 11 };
enum { CORE2_PUSH_EX = 4, CORE2_POP = 5, CORE2_REGISTER_STRING_A = 10, CORE2_CREATE_A = 12 };
enum { MESSAGE_ASCII = 1, MESSAGE_REGISTERED = 3 };

/* nvtxEventAttributes_t (version 3): the message is at byte 40, its type at 32. */
typedef struct {
  uint16_t version, size;
  uint32_t category;
  int32_t color_type;
  uint32_t color;
  int32_t payload_type, reserved0;
  uint64_t payload;
  int32_t message_type;
  const char* message;
} EventAttributes;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void record(const char* what, const char* message) {
  const char* path = getenv("CHAINRULE_NVTX_RECORD");
  if (path == NULL) return;
  pthread_mutex_lock(&lock);
  FILE* f = fopen(path, "a");
  if (f != NULL) {
    fprintf(f, "%s%s%s\n", what, message ? " " : "", message ? message : "");
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

/* A registered string handle is the string itself (see register_string). */
static const char* message_of(const EventAttributes* a) {
  if (a == NULL) return "";
  if (a->message_type == MESSAGE_ASCII || a->message_type == MESSAGE_REGISTERED) {
    return a->message ? a->message : "";
  }
  return "";
}

static int push_a(const char* message) { record("push", message); return 0; }
static int push_ex(const EventAttributes* a) { record("push", message_of(a)); return 0; }
static int pop(void) { record("pop", NULL); return 0; }
static int domain_push_ex(void* domain, const EventAttributes* a) {
  (void)domain;
  return push_ex(a);
}
static int domain_pop(void* domain) { (void)domain; return pop(); }
static void* register_string(void* domain, const char* s) { (void)domain; return strdup(s); }
static void* create_domain(const char* name) { return strdup(name ? name : ""); }

static void set(FunctionTable table, unsigned int size, unsigned int id, FunctionPointer fn) {
  if (id < size && table[id] != NULL) *table[id] = fn;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(GetExportTable get) {
  const ExportTableCallbacks* callbacks = (const ExportTableCallbacks*)get(ETID_CALLBACKS);
  FunctionTable core = NULL, core2 = NULL;
  unsigned int core_size = 0, core2_size = 0;
  if (callbacks == NULL || !callbacks->GetModuleFunctionTable(MODULE_CORE, &core, &core_size) ||
      !callbacks->GetModuleFunctionTable(MODULE_CORE2, &core2, &core2_size)) {
    return 0;
  }
  set(core, core_size, CORE_RANGE_PUSH_A, (FunctionPointer)push_a);
  set(core, core_size, CORE_RANGE_PUSH_EX, (FunctionPointer)push_ex);
  set(core, core_size, CORE_RANGE_POP, (FunctionPointer)pop);
  set(core2, core2_size, CORE2_PUSH_EX, (FunctionPointer)domain_push_ex);
  set(core2, core2_size, CORE2_POP, (FunctionPointer)domain_pop);
  set(core2, core2_size, CORE2_REGISTER_STRING_A, (FunctionPointer)register_string);
  set(core2, core2_size, CORE2_CREATE_A, (FunctionPointer)create_domain);
  return 1;
}
