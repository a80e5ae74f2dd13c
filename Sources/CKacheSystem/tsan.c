#include "CKacheSystem.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KACHE_TSAN 1
#endif
#endif

#ifdef KACHE_TSAN
void __tsan_acquire(void *address);
void __tsan_release(void *address);

void kache_tsan_acquire(const void *address) { __tsan_acquire((void *)address); }
void kache_tsan_release(const void *address) { __tsan_release((void *)address); }
#else
void kache_tsan_acquire(const void *address) { (void)address; }
void kache_tsan_release(const void *address) { (void)address; }
#endif
