// The byte search under every JSON string the server reads or writes, in C for the processor's vector
// instructions (SSE2, which every x86-64 has), which Swift's SIMD types did not compile to here.
// `static inline`, so that Swift inlines it where it is called.

#ifndef CJSONBYTES_H
#define CJSONBYTES_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// The index of the first byte at or after `start` that a JSON string cannot hold as it is (`"`, `\`
/// or a control byte, below 0x20), or `count` when there is none.
static inline size_t cjson_first_special(const uint8_t *bytes, size_t count, size_t start) {
    size_t index = start;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i lastControl = _mm_set1_epi8(0x1F);
    // Sixteen bytes a step: a byte is a control byte when the unsigned minimum of it and 0x1F is itself.
    while (index + 16 <= count) {
        const __m128i chunk = _mm_loadu_si128((const __m128i *)(bytes + index));
        const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(chunk, lastControl), chunk);
        const __m128i marks = _mm_cmpeq_epi8(chunk, quote);
        const __m128i special = _mm_or_si128(_mm_or_si128(marks, _mm_cmpeq_epi8(chunk, backslash)), control);
        const int found = _mm_movemask_epi8(special);
        if (found != 0) {
            return index + (size_t)__builtin_ctz((unsigned)found);
        }
        index += 16;
    }
#endif
    for (; index < count; index++) {
        const uint8_t byte = bytes[index];
        if (byte < 0x20 || byte == '"' || byte == '\\') {
            return index;
        }
    }
    return count;
}

#endif
