/* A test tool for emit_itt: an ITT collector library.
 *
 * ITT's static part (compiled into whatever emits tasks, here the ittapi package)
 * loads the library named by INTEL_LIBITTNOTIFY64 at the first ITT call and calls
 * its __itt_api_init with the table of API entries, whose function pointers a
 * collector fills in (as VTune's does; without __itt_api_init only the groups named
 * by INTEL_ITTNOTIFY_GROUPS would be looked up). This one provides domains, string
 * handles and task begin/end, and appends
 * "begin <name>" / "end" lines to the file named by CHAINRULE_ITT_RECORD, for the
 * tests to read back.
 *
 * The structures are the layouts of ittnotify.h's __itt_domain and
 * __itt_string_handle (the caller reads a domain's flags: nonzero means enabled) and
 * of ittnotify_config.h's __itt_api_info and the head of __itt_global. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Domain {
  volatile int flags;
  const char* name;
  const void* name_wide;
  int extra1;
  void* extra2;
  struct Domain* next;
} Domain;

typedef struct StringHandle {
  const char* str;
  const void* str_wide;
  int extra1;
  void* extra2;
  struct StringHandle* next;
} StringHandle;

typedef struct { unsigned long long d1, d2, d3; } Id;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void record(const char* what, const char* name) {
  const char* path = getenv("CHAINRULE_ITT_RECORD");
  if (path == NULL) return;
  pthread_mutex_lock(&lock);
  FILE* f = fopen(path, "a");
  if (f != NULL) {
    fprintf(f, "%s%s%s\n", what, name ? " " : "", name ? name : "");
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  const char* name;
  void** func_ptr;
  void* init_func;
  void* null_func;
  int group;
} ApiInfo;

typedef struct {
  unsigned char magic[8];
  unsigned long version_major, version_minor, version_build;
  volatile long api_initialized, mutex_initialized, atomic_counter;
  pthread_mutex_t mutex;
  void* lib;
  void* error_handler;
  const char** dll_path_ptr;
  ApiInfo* api_list_ptr;
} GlobalHead;

EXPORT Domain* __itt_domain_create(const char* name) {
  Domain* d = calloc(1, sizeof(Domain));
  d->flags = 1;
  d->name = strdup(name ? name : "");
  return d;
}

EXPORT StringHandle* __itt_string_handle_create(const char* name) {
  StringHandle* h = calloc(1, sizeof(StringHandle));
  h->str = strdup(name ? name : "");
  return h;
}

EXPORT void __itt_task_begin(const Domain* domain, Id id, Id parent, StringHandle* name) {
  (void)domain, (void)id, (void)parent;
  record("begin", name ? name->str : "");
}

EXPORT void __itt_task_end(const Domain* domain) {
  (void)domain;
  record("end", NULL);
}

EXPORT void __itt_api_init(GlobalHead* global, int init_groups) {
  (void)init_groups;
  static const struct { const char* name; void* fn; } mine[] = {
      {"__itt_domain_create", (void*)__itt_domain_create},
      {"__itt_string_handle_create", (void*)__itt_string_handle_create},
      {"__itt_task_begin", (void*)__itt_task_begin},
      {"__itt_task_end", (void*)__itt_task_end},
  };
  for (ApiInfo* api = global->api_list_ptr; api->name != NULL; ++api) {
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; ++i) {
      if (strcmp(api->name, mine[i].name) == 0) *api->func_ptr = mine[i].fn;
    }
  }
}
