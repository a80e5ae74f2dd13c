#ifndef CSIPHASH_H
#define CSIPHASH_H

#include <stddef.h>
#include <stdint.h>

/// SipHash-1-3 of the `count` bytes at `bytes` followed by `extra` as two
/// little-endian bytes, under the key (`k0`, `k1`). Sets `*ascii` to 1 when
/// every one of the `count` bytes is below 0x80, else to 0.
uint64_t kache_siphash13(const void *bytes, size_t count, uint16_t extra, uint64_t k0, uint64_t k1, int *ascii);

#endif
