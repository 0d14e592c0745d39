// The caching device-memory allocator behind cr_alloc/cr_free (Note [caching allocator]).
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/platform.h"

// Note [caching allocator]
//   cudaMalloc and cudaFree are slow and synchronize the device, so device memory is
//   asked for in segments and kept: a freed block goes back to a pool, not to the
//   driver. Requests are rounded up to 512 bytes. Requests up to 1 MiB come from the
//   small pool, whose segments are 2 MiB; larger ones from the large pool (20 MiB
//   segments below 10 MiB, else the request rounded up to 2 MiB). A free block
//   larger than the request is split, and the rest stays free (small pool: when at
//   least 512 bytes remain; large pool: when more than 1 MiB remains); a freed block
//   merges with free neighbours of its segment. Pools are keyed by stream: a block
//   is reused only by the stream it was allocated on (work on that stream is ordered
//   after the free), unless cr_record_stream said another stream uses it; then its
//   free waits for an event recorded on each such stream, and the block returns to the
//   pool once those events have completed. Out of memory: free the cached segments
//   (after waiting for pending events) and retry once, then fail with the reference's
//   "CUDA out of memory" message and its figures. Never managed memory.
//   The allocator sees the device only through DeviceMemory (Note [device memory
//   interface]), so its tests run against a fake device.

namespace cr {
namespace {

constexpr size_t kRound = 512;                   // every block is a multiple of this
constexpr size_t kSmallSize = 1u << 20;          // up to this: the small pool
constexpr size_t kSmallBuffer = 2u << 20;        // a small pool segment
constexpr size_t kLargeBuffer = 20u << 20;       // a large pool segment, requests < 10 MiB
constexpr size_t kMinLargeAlloc = 10u << 20;     // from here, a segment per request ...
constexpr size_t kRoundLarge = 2u << 20;         // ... rounded up to 2 MiB

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }
size_t block_size_for(size_t n) { return n < kRound ? kRound : round_up(n, kRound); }
size_t segment_size_for(size_t n) {
  if (n <= kSmallSize) return kSmallBuffer;
  if (n < kMinLargeAlloc) return kLargeBuffer;
  return round_up(n, kRoundLarge);
}

struct Block;
struct DeviceAllocator;

struct BlockOrder {  // pools sort by (stream, size, address): best fit on the stream
  bool operator()(const Block* a, const Block* b) const;
};
using Pool = std::set<Block*, BlockOrder>;

struct Block {
  Block(DeviceAllocator* owner, int device, void* stream, size_t size, char* ptr, Pool* pool,
        bool small)
      : owner(owner), device(device), stream(stream), size(size), ptr(ptr), pool(pool),
        small(small) {}
  DeviceAllocator* owner;  // the allocator it came from (a device's, or a fake device's)
  int device;
  void* stream;          // the stream it was allocated on
  size_t size;
  char* ptr;
  Pool* pool;            // small or large pool of its device
  bool small;            // pool is the small pool
  bool allocated = false;
  bool in_pool = false;  // free and reusable (not waiting for events)
  Block* prev = nullptr; // neighbours in the same segment
  Block* next = nullptr;
  std::set<void*> stream_uses;  // other streams that use it (cr_record_stream)
  int pending_events = 0;
};

bool BlockOrder::operator()(const Block* a, const Block* b) const {
  auto sa = reinterpret_cast<uintptr_t>(a->stream), sb = reinterpret_cast<uintptr_t>(b->stream);
  if (sa != sb) return sa < sb;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

// One statistic as torch.cuda.memory_stats counts it.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(int64_t n) {
    current += n;
    allocated += n;
    peak = std::max(peak, current);
  }
  void sub(int64_t n) {
    current -= n;
    freed += n;
  }
};

enum StatKind { kAllocatedBytes, kReservedBytes, kAllocations, kSegments, kActiveBytes, kNumStatKinds };
const char* const kStatKindNames[] = {"allocated_bytes", "reserved_bytes", "allocation", "segment",
                                      "active_bytes"};
const char* const kStatPoolNames[] = {"all", "small_pool", "large_pool"};
const char* const kStatFieldNames[] = {"current", "peak", "allocated", "freed"};

struct DeviceStats {
  Stat stat[kNumStatKinds][3];  // [kind][all, small pool, large pool]
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
};

struct DeviceAllocator {
  int device = 0;
  DeviceMemory* memory = &platform_memory();
  std::unique_ptr<FakeDeviceMemory> fake;
  Pool small_pool, large_pool;
  double fraction = 1.0;  // of the device's total memory this allocator may reserve
  std::vector<std::pair<void*, Block*>> pending;  // (event, block) of deferred frees
  DeviceStats stats;

  void count(StatKind kind, const Block* b, int64_t n) {
    int pool = b->small ? 1 : 2;
    for (int p : {0, pool}) n >= 0 ? stats.stat[kind][p].add(n) : stats.stat[kind][p].sub(-n);
  }
};

std::mutex mutex;
std::vector<std::unique_ptr<DeviceAllocator>> devices;
// The real allocators of devices that cr_testing_set_fake_capacity put a fake device
// under: their live blocks still go back to them (Block::owner).
std::vector<std::unique_ptr<DeviceAllocator>> stashed;
std::unordered_map<void*, Block*> allocated_blocks;

DeviceAllocator& device_allocator(int device) {
  while (static_cast<int>(devices.size()) <= device) {
    devices.emplace_back(new DeviceAllocator);
    devices.back()->device = static_cast<int>(devices.size()) - 1;
  }
  return *devices[device];
}

int check_device(int device) {
  static const int count = [] {  // constant in a process: asked once
    int n = 0;
    return cr_device_count(&n) == CR_SUCCESS ? n : 0;
  }();
  CR_CHECK_ARG(device >= 0 && device < count,
               "CUDA error: invalid device ordinal (device %d; %d device(s))", device, count);
  return CR_SUCCESS;
}

// Takes the best-fitting free block of `stream` out of `pool`, or nullptr.
Block* take_free_block(Pool& pool, void* stream, size_t size) {
  Block key(nullptr, 0, stream, size, nullptr, &pool, false);
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  b->in_pool = false;
  return b;
}

void merge_into(Block* dst, Block* src, Pool& pool) {
  // src is a free neighbour of dst in its segment; dst takes its memory.
  if (!src || !src->in_pool) return;
  pool.erase(src);
  if (src == dst->prev) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  dst->size += src->size;
  delete src;
}

// A block nobody uses any more goes back to its pool, merged with free neighbours.
void return_to_pool(DeviceAllocator& d, Block* b) {
  d.count(kActiveBytes, b, -static_cast<int64_t>(b->size));
  merge_into(b, b->prev, *b->pool);
  merge_into(b, b->next, *b->pool);
  b->in_pool = true;
  b->pool->insert(b);
}

// Blocks whose other-stream events have completed return to their pools.
int process_events(DeviceAllocator& d, bool wait) {
  std::vector<std::pair<void*, Block*>> still;
  int status = CR_SUCCESS;
  for (auto& [event, block] : d.pending) {
    int done = 0;
    if (status == CR_SUCCESS && wait) status = cr_event_synchronize(event);
    if (status == CR_SUCCESS) status = cr_event_query(event, &done);
    if (!done) {
      still.emplace_back(event, block);
      continue;
    }
    cr_event_destroy(event);
    if (--block->pending_events == 0) return_to_pool(d, block);
  }
  d.pending.swap(still);
  return status;
}

// Frees every cached segment that is whole and free.
int release_cached(DeviceAllocator& d) {
  CR_RETURN_IF_ERROR(process_events(d, /*wait=*/true));
  for (Pool* pool : {&d.small_pool, &d.large_pool}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      CR_RETURN_IF_ERROR(d.memory->raw_free(d.device, b->ptr));
      d.count(kReservedBytes, b, -static_cast<int64_t>(b->size));
      d.count(kSegments, b, -1);
      it = pool->erase(it);
      delete b;
    }
  }
  return CR_SUCCESS;
}

int out_of_memory(DeviceAllocator& d, size_t requested) {
  size_t free_bytes = 0, total = 0;
  d.memory->mem_info(d.device, &free_bytes, &total);
  d.stats.num_ooms++;
  const DeviceStats& s = d.stats;
  return set_error(CR_ERROR_OUT_OF_MEMORY,
                   "CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s "
                   "already allocated; %s free; %s reserved in total by chainrule)",
                   format_size(static_cast<double>(requested)).c_str(), d.device,
                   format_size(static_cast<double>(total)).c_str(),
                   format_size(static_cast<double>(s.stat[kAllocatedBytes][0].current)).c_str(),
                   format_size(static_cast<double>(free_bytes)).c_str(),
                   format_size(static_cast<double>(s.stat[kReservedBytes][0].current)).c_str());
}

// A new segment for `size` bytes on `stream` from the device (CR_ERROR_OUT_OF_MEMORY,
// without a message, when it is full).
int new_segment(DeviceAllocator& d, Pool& pool, void* stream, size_t size, Block** out) {
  size_t seg = segment_size_for(size);
  if (d.fraction < 1.0) {  // cr_set_memory_fraction's cap on what this process reserves
    size_t free_bytes = 0, total = 0;
    CR_RETURN_IF_ERROR(d.memory->mem_info(d.device, &free_bytes, &total));
    auto reserved = static_cast<double>(d.stats.stat[kReservedBytes][0].current);
    if (reserved + static_cast<double>(seg) > d.fraction * static_cast<double>(total))
      return CR_ERROR_OUT_OF_MEMORY;
  }
  void* ptr = nullptr;
  CR_RETURN_IF_ERROR(d.memory->raw_alloc(d.device, seg, &ptr));
  *out = new Block(&d, d.device, stream, seg, static_cast<char*>(ptr), &pool,
                   &pool == &d.small_pool);
  d.count(kReservedBytes, *out, static_cast<int64_t>(seg));
  d.count(kSegments, *out, 1);
  return CR_SUCCESS;
}

// A block of `size` bytes for `stream`: a cached one, a new segment, or, when the
// device is full, after freeing the cache once (which waits for the blocks other
// streams were using: one of them may fit now) a cached one or a new segment again.
int find_or_make_block(DeviceAllocator& d, Pool& pool, void* stream, size_t size, Block** out) {
  if ((*out = take_free_block(pool, stream, size))) return CR_SUCCESS;
  int status = new_segment(d, pool, stream, size, out);
  if (status != CR_ERROR_OUT_OF_MEMORY) return status;
  d.stats.num_alloc_retries++;
  CR_RETURN_IF_ERROR(release_cached(d));
  if ((*out = take_free_block(pool, stream, size))) return CR_SUCCESS;
  status = new_segment(d, pool, stream, size, out);
  return status == CR_ERROR_OUT_OF_MEMORY ? out_of_memory(d, segment_size_for(size)) : status;
}

// Splits `b` after `size` bytes when the rest is worth keeping; the rest goes back to
// the pool.
void split(Block* b, size_t size) {
  size_t rest = b->size - size;
  if (b->small ? rest < kRound : rest <= kSmallSize) return;
  auto* r = new Block(b->owner, b->device, b->stream, rest, b->ptr + size, b->pool, b->small);
  r->prev = b;
  r->next = b->next;
  if (r->next) r->next->prev = r;
  b->next = r;
  b->size = size;
  r->in_pool = true;
  b->pool->insert(r);
}

int allocate(int device, size_t nbytes, void* stream, void** ptr) {
  DeviceAllocator& d = device_allocator(device);
  CR_RETURN_IF_ERROR(process_events(d, /*wait=*/false));
  size_t size = block_size_for(nbytes);
  Pool& pool = size <= kSmallSize ? d.small_pool : d.large_pool;
  Block* b = nullptr;
  CR_RETURN_IF_ERROR(find_or_make_block(d, pool, stream, size, &b));
  split(b, size);
  b->allocated = true;
  allocated_blocks[b->ptr] = b;
  d.count(kAllocatedBytes, b, static_cast<int64_t>(b->size));
  d.count(kActiveBytes, b, static_cast<int64_t>(b->size));
  d.count(kAllocations, b, 1);
  *ptr = b->ptr;
  return CR_SUCCESS;
}

// Makes `device` current for its lifetime: record_stream's events are made on the
// block's device (CUDA records an event only on a stream of the event's device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = 0;
    if (cr_get_device(&current) == CR_SUCCESS && current != device &&
        cr_set_device(device) == CR_SUCCESS)
      prev_ = current;
  }
  ~DeviceGuard() {
    if (prev_ >= 0) cr_set_device(prev_);
  }

 private:
  int prev_ = -1;
};

int deallocate(void* ptr) {
  auto it = allocated_blocks.find(ptr);
  CR_CHECK_ARG(it != allocated_blocks.end(),
               "cr_free: %p was not allocated by the caching allocator (or is freed already)", ptr);
  Block* b = it->second;
  allocated_blocks.erase(it);
  DeviceAllocator& d = *b->owner;
  b->allocated = false;
  d.count(kAllocatedBytes, b, -static_cast<int64_t>(b->size));
  d.count(kAllocations, b, -1);
  // Other streams may still be using the block: reuse waits for their work.
  if (!b->stream_uses.empty()) {
    DeviceGuard guard(b->device);
    for (void* s : b->stream_uses) {
      void* event = nullptr;
      CR_RETURN_IF_ERROR(cr_event_create(&event, 0));
      CR_RETURN_IF_ERROR(cr_event_record(event, s));
      d.pending.emplace_back(event, b);
      b->pending_events++;
    }
  }
  b->stream_uses.clear();
  if (b->pending_events == 0) return_to_pool(d, b);
  return CR_SUCCESS;
}

int64_t stat_field(const Stat& s, int field) {
  switch (field) {
    case 0: return s.current;
    case 1: return s.peak;
    case 2: return s.allocated;
    default: return s.freed;
  }
}

std::string stat_names() {
  std::string names;
  for (int k = 0; k < kNumStatKinds; ++k)
    for (const char* pool : kStatPoolNames)
      for (const char* field : kStatFieldNames)
        names += std::string(kStatKindNames[k]) + "." + pool + "." + field + ",";
  return names + "num_alloc_retries,num_ooms";
}

}  // namespace
}  // namespace cr

using namespace cr;

extern "C" {

int cr_alloc(int device, size_t nbytes, void* stream, void** ptr) {
  CR_CHECK_ARG(ptr, "cr_alloc: ptr is NULL");
  *ptr = nullptr;
  CR_RETURN_IF_ERROR(check_device(device));
  if (nbytes == 0) return CR_SUCCESS;  // like the reference: no memory for 0 bytes
  std::lock_guard<std::mutex> lock(mutex);
  return guarded([&] { return allocate(device, nbytes, stream, ptr); });
}

int cr_free(void* ptr) {
  if (ptr == nullptr) return CR_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex);
  return guarded([&] { return deallocate(ptr); });
}

int cr_record_stream(void* ptr, void* stream) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocated_blocks.find(ptr);
  CR_CHECK_ARG(it != allocated_blocks.end(),
               "cr_record_stream: %p is not a live allocation of the caching allocator", ptr);
  if (stream != it->second->stream) it->second->stream_uses.insert(stream);
  return CR_SUCCESS;
}

int cr_memory_stats(int device, int64_t* out) {
  CR_RETURN_IF_ERROR(check_device(device));
  std::lock_guard<std::mutex> lock(mutex);
  const DeviceStats& s = device_allocator(device).stats;
  out[0] = s.stat[kAllocatedBytes][0].current;
  out[1] = s.stat[kAllocatedBytes][0].peak;
  out[2] = s.stat[kReservedBytes][0].current;
  out[3] = s.stat[kReservedBytes][0].peak;
  out[4] = s.stat[kAllocations][0].allocated;
  out[5] = s.stat[kAllocations][0].freed;
  return CR_SUCCESS;
}

int cr_reset_accumulated_memory_stats(int device) {
  CR_RETURN_IF_ERROR(check_device(device));
  std::lock_guard<std::mutex> lock(mutex);
  DeviceStats& s = device_allocator(device).stats;
  for (auto& kind : s.stat)
    for (Stat& stat : kind) stat.allocated = stat.freed = 0;
  s.num_alloc_retries = s.num_ooms = 0;
  return CR_SUCCESS;
}

int cr_set_memory_fraction(int device, double fraction) {
  CR_RETURN_IF_ERROR(check_device(device));
  CR_CHECK_ARG(fraction >= 0.0 && fraction <= 1.0,
               "Invalid fraction value: %g. Allowed range: 0~1", fraction);
  std::lock_guard<std::mutex> lock(mutex);
  device_allocator(device).fraction = fraction;
  return CR_SUCCESS;
}

int cr_get_memory_fraction(int device, double* fraction) {
  CR_RETURN_IF_ERROR(check_device(device));
  std::lock_guard<std::mutex> lock(mutex);
  *fraction = device_allocator(device).fraction;
  return CR_SUCCESS;
}

const char* cr_memory_stat_names(void) {
  static const std::string names = stat_names();
  return names.c_str();
}

int cr_memory_stats_all(int device, int64_t* out, int capacity) {
  CR_RETURN_IF_ERROR(check_device(device));
  constexpr int kCount = kNumStatKinds * 3 * 4 + 2;
  CR_CHECK_ARG(capacity >= kCount, "cr_memory_stats_all: room for %d values needed", kCount);
  std::lock_guard<std::mutex> lock(mutex);
  const DeviceStats& s = device_allocator(device).stats;
  int i = 0;
  for (int k = 0; k < kNumStatKinds; ++k)
    for (int p = 0; p < 3; ++p)
      for (int f = 0; f < 4; ++f) out[i++] = stat_field(s.stat[k][p], f);
  out[i++] = s.num_alloc_retries;
  out[i++] = s.num_ooms;
  return CR_SUCCESS;
}

int cr_reset_peak_memory_stats(int device) {
  CR_RETURN_IF_ERROR(check_device(device));
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& kind : device_allocator(device).stats.stat)
    for (Stat& s : kind) s.peak = s.current;
  return CR_SUCCESS;
}

int cr_empty_cache(void) {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& d : devices) CR_RETURN_IF_ERROR(release_cached(*d));
  return CR_SUCCESS;
}

int cr_mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) {
  CR_RETURN_IF_ERROR(check_device(device));
  std::lock_guard<std::mutex> lock(mutex);
  DeviceAllocator& d = device_allocator(device);
  return d.memory->mem_info(device, free_bytes, total_bytes);
}

int cr_testing_set_fake_capacity(int device, int64_t bytes) {
  CR_RETURN_IF_ERROR(check_device(device));
  std::lock_guard<std::mutex> lock(mutex);
  DeviceAllocator& current = device_allocator(device);
  if (current.fake) {  // the fake device in place goes away: it must be empty
    CR_RETURN_IF_ERROR(release_cached(current));
    CR_CHECK_ARG(current.stats.stat[kReservedBytes][0].current == 0,
                 "cr_testing_set_fake_capacity: the fake device %d still holds %lld bytes of "
                 "allocations", device,
                 static_cast<long long>(current.stats.stat[kAllocatedBytes][0].current));
  }
  if (stashed.size() < devices.size()) stashed.resize(devices.size());
  std::unique_ptr<DeviceAllocator> next;
  if (bytes >= 0) {
    next.reset(new DeviceAllocator);
    next->device = device;
    next->fake.reset(new FakeDeviceMemory(static_cast<size_t>(bytes)));
    next->memory = next->fake.get();
  } else if (current.fake) {
    next = std::move(stashed[device]);
  } else {
    return CR_SUCCESS;  // the real device is in place already
  }
  if (!current.fake) stashed[device] = std::move(devices[device]);
  devices[device] = std::move(next);
  return CR_SUCCESS;
}

}  // extern "C"
