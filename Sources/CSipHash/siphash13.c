// SipHash-1-3 (Aumasson and Bernstein), one-shot over a contiguous buffer.
// In C rather than Swift: the index hashes a key on every get and set, and
// debug builds (the tests, the crash harness) compile Swift unoptimized,
// where the same rounds cost 1 µs a key against Hasher's 0.14; C at -O0
// costs about what Hasher does, and in release builds a quarter of it.

#include "CSipHash.h"

#include <string.h>

#define ROTATE(x, bits) (((x) << (bits)) | ((x) >> (64 - (bits))))

#define SIP_ROUND                                                   \
    do {                                                            \
        v0 += v1; v1 = ROTATE(v1, 13); v1 ^= v0; v0 = ROTATE(v0, 32); \
        v2 += v3; v3 = ROTATE(v3, 16); v3 ^= v2;                     \
        v0 += v3; v3 = ROTATE(v3, 21); v3 ^= v0;                     \
        v2 += v1; v1 = ROTATE(v1, 17); v1 ^= v2; v2 = ROTATE(v2, 32); \
    } while (0)

// One word of input: one round (the "1" of 1-3).
#define COMPRESS(word)        \
    do {                      \
        uint64_t m_ = (word); \
        v3 ^= m_;             \
        SIP_ROUND;            \
        v0 ^= m_;             \
    } while (0)

uint64_t kache_siphash13(const void *input, size_t count, uint16_t extra, uint64_t k0, uint64_t k1, int *ascii) {
    const uint8_t *bytes = input;
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
    uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
    uint64_t v3 = k1 ^ 0x7465646279746573ULL;
    uint64_t seen = 0;
    size_t offset = 0;
    for (; offset + 8 <= count; offset += 8) {
        uint64_t word;
        memcpy(&word, bytes + offset, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        seen |= word;
        COMPRESS(word);
    }
    // The last 0-7 bytes, then `extra`'s two: one word, or two when they pass 8.
    uint64_t word = 0;
    size_t rest = count - offset;
    if (rest > 0 && count >= 8) {
        // The last eight bytes in one load, the ones already hashed shifted
        // out: the byte loop cost 5 instructions a byte, a sixth of hashing
        // an 11-byte key.
        memcpy(&word, bytes + count - 8, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        word >>= 8 * (8 - rest);
    } else {
        for (size_t index = 0; index < rest; index++) word |= (uint64_t)bytes[offset + index] << (8 * index);
    }
    seen |= word;
    *ascii = (seen & 0x8080808080808080ULL) == 0;
    uint64_t length = (uint64_t)(count + 2) << 56;
    uint64_t more = extra;
    if (rest < 6) {
        COMPRESS(word | more << (8 * rest) | length);
    } else if (rest == 6) {
        COMPRESS(word | more << 48);
        COMPRESS(length);
    } else {
        COMPRESS(word | more << 56);
        COMPRESS(more >> 8 | length);
    }
    // Three rounds to finish (the "3").
    v2 ^= 0xff;
    SIP_ROUND;
    SIP_ROUND;
    SIP_ROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}
