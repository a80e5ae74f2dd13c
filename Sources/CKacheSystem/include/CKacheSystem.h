#ifndef CKACHE_SYSTEM_H
#define CKACHE_SYSTEM_H

/// Flushes the file system that holds `fd` (Linux `syncfs`, which Swift's
/// Glibc module does not export because it needs _GNU_SOURCE).
/// Returns 0 or -1 with errno set. Elsewhere it falls back to `sync()`.
int kache_syncfs(int fd);

/// Tell ThreadSanitizer that a lock at `address` was acquired / is about to be
/// released. No-ops unless this target is compiled with -fsanitize=thread.
void kache_tsan_acquire(const void *address);
void kache_tsan_release(const void *address);

/// Gives the heap's free pages back to the system (glibc `malloc_trim(0)`;
/// a no-op elsewhere). glibc keeps what a thread freed in that thread's
/// arena, so the write-behind thread's spent buffers would stay resident.
void kache_return_freed_memory(void);

/// Starts loading the cache line at `address` for a write, without waiting
/// for it; never faults. Swift has no prefetch of its own.
static inline void kache_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
