// The cache of pinned (page-locked) host memory behind cr_host_alloc_pinned.
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/platform.h"

// Note [pinned memory cache]
//   cudaHostAlloc is slow and cudaFreeHost synchronizes the device, so freed pinned
//   blocks are kept and reused (save_on_cpu(pin_memory=True) makes one per saved
//   tensor). Sizes round up to a power of two (at least 512 bytes). A block may still
//   be read or written by an asynchronous copy when it is freed: cr_memcpy records an
//   event on the copy's stream for each pinned block it touches (record_pinned_copy),
//   and a freed block is reused only once those events have completed. When the
//   platform has no more pinned memory, the cache is freed once (after waiting for
//   its events) and the allocation retried.

namespace cr {
namespace {

struct PinnedBlock {
  size_t size;
  bool allocated = true;
  std::vector<void*> events;  // copies still using it
};

std::mutex mutex;
std::map<char*, PinnedBlock> blocks;      // every block, live or cached, by address
std::multimap<size_t, char*> free_blocks;  // cached blocks ready for reuse, by size
std::set<char*> draining;                 // freed blocks waiting for their events

size_t pinned_size(size_t n) {
  size_t size = 512;
  while (size < n) size <<= 1;
  return size;
}

// The block holding `p`, or blocks.end().
std::map<char*, PinnedBlock>::iterator find_block(const void* p) {
  auto* c = static_cast<char*>(const_cast<void*>(p));
  auto it = blocks.upper_bound(c);
  if (it == blocks.begin()) return blocks.end();
  --it;
  return c < it->first + it->second.size ? it : blocks.end();
}

// Drained blocks whose copies are done become reusable (`wait`: wait for them).
int drain(bool wait) {
  for (auto it = draining.begin(); it != draining.end();) {
    PinnedBlock& b = blocks.at(*it);
    while (!b.events.empty()) {
      int done = 0;
      if (wait) CR_RETURN_IF_ERROR(cr_event_synchronize(b.events.back()));
      CR_RETURN_IF_ERROR(cr_event_query(b.events.back(), &done));
      if (!done) break;
      cr_event_destroy(b.events.back());
      b.events.pop_back();
    }
    if (!b.events.empty()) {
      ++it;
      continue;
    }
    free_blocks.emplace(b.size, *it);
    it = draining.erase(it);
  }
  return CR_SUCCESS;
}

int release_cache() {
  CR_RETURN_IF_ERROR(drain(/*wait=*/true));
  for (auto& [size, ptr] : free_blocks) {
    CR_RETURN_IF_ERROR(raw_pinned_free(ptr));
    blocks.erase(ptr);
  }
  free_blocks.clear();
  return CR_SUCCESS;
}

int record_use(char* block, void* stream) {
  void* event = nullptr;
  CR_RETURN_IF_ERROR(cr_event_create(&event, 0));
  CR_RETURN_IF_ERROR(cr_event_record(event, stream));
  blocks.at(block).events.push_back(event);
  return CR_SUCCESS;
}

}  // namespace

int record_pinned_copy(void* dst, const void* src, int kind, void* stream) {
  if (kind == 1) return CR_SUCCESS;  // device -> host copies are waited for
  std::lock_guard<std::mutex> lock(mutex);
  for (const void* p : {static_cast<const void*>(dst), src}) {
    auto it = find_block(p);
    if (it != blocks.end()) CR_RETURN_IF_ERROR(record_use(it->first, stream));
  }
  return CR_SUCCESS;
}

}  // namespace cr

using namespace cr;

extern "C" {

int cr_host_alloc_pinned(void** ptr, size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex);
  CR_RETURN_IF_ERROR(drain(/*wait=*/false));
  size_t size = pinned_size(nbytes);
  auto it = free_blocks.find(size);
  if (it != free_blocks.end()) {
    *ptr = it->second;
    blocks.at(it->second).allocated = true;
    free_blocks.erase(it);
    return CR_SUCCESS;
  }
  int status = raw_pinned_alloc(ptr, size);
  if (status == CR_ERROR_OUT_OF_MEMORY) {
    CR_RETURN_IF_ERROR(release_cache());
    status = raw_pinned_alloc(ptr, size);
  }
  if (status == CR_ERROR_OUT_OF_MEMORY)
    return set_error(CR_ERROR_OUT_OF_MEMORY, "pinned host memory: cannot allocate %s",
                     format_size(static_cast<double>(nbytes)).c_str());
  CR_RETURN_IF_ERROR(status);
  blocks.emplace(static_cast<char*>(*ptr), PinnedBlock{size});
  return CR_SUCCESS;
}

int cr_host_free_pinned(void* ptr) {
  if (ptr == nullptr) return CR_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = blocks.find(static_cast<char*>(ptr));
  CR_CHECK_ARG(it != blocks.end() && it->second.allocated,
               "cr_host_free_pinned: %p is not a live block of pinned memory", ptr);
  it->second.allocated = false;
  draining.insert(it->first);
  return drain(/*wait=*/false);
}

int cr_host_is_pinned(const void* ptr, int* pinned) {
  std::lock_guard<std::mutex> lock(mutex);
  *pinned = find_block(ptr) != blocks.end() ? 1 : 0;
  return CR_SUCCESS;
}

int cr_host_empty_cache(void) {
  std::lock_guard<std::mutex> lock(mutex);
  return release_cache();
}

}  // extern "C"
