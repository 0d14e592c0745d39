// The caching allocator's logic (Note [caching allocator] in csrc/runtime/allocator.cc)
// in C++, against the fake device memory (Note [device memory interface]) of the host
// build's runtime: size classes, reuse, split and merge, per-stream pools,
// cr_record_stream delaying reuse, and out of memory (the cache freed once and the
// request retried, then the error with its figures). No GPU, no Python: the C ABI of
// cr_cuda.h, as Python calls it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cr_cuda.h"

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;
int failures = 0;

#define EXPECT(cond)                                                        \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                           \
    }                                                                       \
  } while (0)

#define EXPECT_OK(call)                                                               \
  do {                                                                                \
    int status_ = (call);                                                             \
    if (status_ != CR_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, #call, \
                   status_, cr_last_error());                                         \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

// torch.cuda.memory_stats-style statistics of device 0, by name.
std::map<std::string, int64_t> stats() {
  std::vector<std::string> names;
  std::stringstream all(cr_memory_stat_names());
  for (std::string name; std::getline(all, name, ',');) names.push_back(name);
  std::vector<int64_t> values(names.size());
  EXPECT_OK(cr_memory_stats_all(0, values.data(), static_cast<int>(values.size())));
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = values[i];
  return out;
}

int64_t stat(const char* name) { return stats().at(name); }

char* alloc(size_t nbytes, void* stream = nullptr) {
  void* ptr = nullptr;
  EXPECT_OK(cr_alloc(0, nbytes, stream, &ptr));
  return static_cast<char*>(ptr);
}

void release(void* ptr) { EXPECT_OK(cr_free(ptr)); }

// Each test runs on a fresh fake device of `capacity` bytes.
void on_fake_device(size_t capacity, const std::function<void()>& body) {
  EXPECT_OK(cr_testing_set_fake_capacity(0, static_cast<int64_t>(capacity)));
  body();
  EXPECT_OK(cr_empty_cache());
  EXPECT(stat("reserved_bytes.all.current") == 0);   // every block came back
}

void size_classes() {
  on_fake_device(64 * MiB, [] {
    char* a = alloc(1);                 // rounded up to 512 bytes, small pool
    char* b = alloc(513);               // 1024
    EXPECT(stat("allocated_bytes.all.current") == 512 + 1024);
    EXPECT(stat("reserved_bytes.small_pool.current") == static_cast<int64_t>(2 * MiB));
    char* d = alloc(11 * MiB + 1);      // large pool, from 10 MiB: a segment of the
    EXPECT(stat("reserved_bytes.large_pool.current") ==   // request rounded up to 2 MiB
           static_cast<int64_t>(12 * MiB));
    char* c = alloc(MiB + 1);           // below 10 MiB: a 20 MiB segment (d's rest, under
    EXPECT(stat("reserved_bytes.large_pool.current") ==   // 1 MiB, was not split off)
           static_cast<int64_t>(32 * MiB));
    char* e = alloc(2 * MiB);           // best fit in c's segment's free rest
    EXPECT(e == c + MiB + 512 && stat("segment.all.current") == 3);
    for (char* p : {a, b, c, d, e}) release(p);
    EXPECT(stat("allocated_bytes.all.current") == 0);
    void* none = &none;
    EXPECT_OK(cr_alloc(0, 0, nullptr, &none));   // 0 bytes: no memory, NULL
    EXPECT(none == nullptr);
  });
}

void reuse_split_and_merge() {
  on_fake_device(64 * MiB, [] {
    char* a = alloc(1000);
    char* b = alloc(1000);              // split off the same segment, right after a
    EXPECT(b == a + 1024);
    release(a);
    char* c = alloc(600);               // a's block is reused (best fit on the stream)
    EXPECT(c == a);
    EXPECT(stat("segment.all.current") == 1);
    release(c);
    release(b);                         // merged back into one free 2 MiB block ...
    char* whole = alloc(MiB);           // ... that holds the largest small request
    EXPECT(whole == a);
    release(whole);
    EXPECT(stat("reserved_bytes.all.current") == static_cast<int64_t>(2 * MiB));
    EXPECT_OK(cr_empty_cache());        // a whole free segment goes back to the device
    EXPECT(stat("reserved_bytes.all.current") == 0);
  });
}

void large_pool_split_keeps_only_big_rests() {
  on_fake_device(64 * MiB, [] {
    char* a = alloc(2 * MiB);           // 20 MiB segment: 18 MiB rest (> 1 MiB) split off
    char* b = alloc(2 * MiB);
    EXPECT(b == a + 2 * MiB);
    EXPECT(stat("segment.all.current") == 1);
    release(a);
    release(b);
  });
}

void per_stream_pools() {
  on_fake_device(64 * MiB, [] {
    void* s = nullptr;
    EXPECT_OK(cr_stream_create(&s, 0));
    char* a = alloc(4096);
    release(a);
    char* b = alloc(4096, s);           // another stream's pool: not a's block
    EXPECT(b != a);
    char* c = alloc(4096);              // the default stream's pool: a's block
    EXPECT(c == a);
    release(b);
    release(c);
    EXPECT_OK(cr_stream_destroy(s));
  });
}

void record_stream_delays_reuse() {
  on_fake_device(64 * MiB, [] {
    void* s = nullptr;
    EXPECT_OK(cr_stream_create(&s, 0));
    char* a = alloc(4096);
    EXPECT_OK(cr_record_stream(a, s));
    EXPECT_OK(cr_testing_hold_stream(s, 1));   // work queued on s is not done
    release(a);
    EXPECT(stat("active_bytes.all.current") == 4096);   // still in use by s
    char* b = alloc(4096);
    EXPECT(b != a);
    EXPECT_OK(cr_testing_hold_stream(s, 0));   // s's work finishes
    char* c = alloc(4096);
    EXPECT(c == a);
    release(b);
    release(c);
    EXPECT_OK(cr_stream_destroy(s));
  });
}

void out_of_memory_frees_the_cache_once_then_fails() {
  on_fake_device(64 * MiB, [] {
    void* s = nullptr;
    EXPECT_OK(cr_stream_create(&s, 0));
    release(alloc(40 * MiB, s));        // cached in s's pool
    char* a = alloc(40 * MiB);          // does not fit next to it: cache freed, retried
    EXPECT(a != nullptr);
    EXPECT(stat("num_alloc_retries") == 1);
    EXPECT(stat("num_ooms") == 0);
    void* big = nullptr;
    EXPECT(cr_alloc(0, 30 * MiB, nullptr, &big) == CR_ERROR_OUT_OF_MEMORY);
    EXPECT(big == nullptr);
    std::string message = cr_last_error();
    EXPECT(message.find("CUDA out of memory. Tried to allocate 30.00 MiB") == 0);
    EXPECT(message.find("64.00 MiB total capacity") != std::string::npos);
    EXPECT(message.find("40.00 MiB already allocated") != std::string::npos);
    EXPECT(message.find("24.00 MiB free") != std::string::npos);
    EXPECT(stat("num_alloc_retries") == 2);
    EXPECT(stat("num_ooms") == 1);
    release(a);
    EXPECT_OK(cr_stream_destroy(s));
  });
}

void errors_name_the_pointer() {
  on_fake_device(MiB, [] {
    int dummy = 0;
    EXPECT(cr_free(&dummy) == CR_ERROR_INVALID_VALUE);
    EXPECT(std::strstr(cr_last_error(), "was not allocated by the caching allocator"));
    EXPECT(cr_record_stream(&dummy, nullptr) == CR_ERROR_INVALID_VALUE);
    void* ptr = nullptr;
    EXPECT(cr_alloc(5, 16, nullptr, &ptr) == CR_ERROR_INVALID_VALUE);   // no device 5
    EXPECT(std::strstr(cr_last_error(), "invalid device ordinal"));
  });
}

}  // namespace

int main() {
  const std::vector<std::pair<const char*, void (*)()>> tests = {
      {"size_classes", size_classes},
      {"reuse_split_and_merge", reuse_split_and_merge},
      {"large_pool_split_keeps_only_big_rests", large_pool_split_keeps_only_big_rests},
      {"per_stream_pools", per_stream_pools},
      {"record_stream_delays_reuse", record_stream_delays_reuse},
      {"out_of_memory_frees_the_cache_once_then_fails",
       out_of_memory_frees_the_cache_once_then_fails},
      {"errors_name_the_pointer", errors_name_the_pointer},
  };
  for (const auto& [name, test] : tests) {
    int before = failures;
    test();
    std::printf("%s %s\n", failures == before ? "PASS" : "FAIL", name);
  }
  EXPECT_OK(cr_testing_set_fake_capacity(0, -1));
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
