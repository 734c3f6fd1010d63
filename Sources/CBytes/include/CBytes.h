// The byte-level work under every line the server reads or writes (the search for the bytes a JSON
// string must escape, the UTF-8 check of a line), in C for the processor's vector instructions, which
// Swift's SIMD types did not compile to here. The search is `static inline`, so that Swift inlines it
// where it is called.

#ifndef CBYTES_H
#define CBYTES_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// The index of the first byte at or after `start` that a JSON string cannot hold as it is (`"`, `\`
/// or a control byte, below 0x20), or `count` when there is none.
static inline size_t cbytes_first_special(const uint8_t *bytes, size_t count, size_t start) {
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

/// Whether `bytes` are well-formed UTF-8 (no overlong form, no surrogate, nothing above U+10FFFF, no
/// sequence cut short): 1 when they are, 0 when not, and -1 when this processor lacks the vector
/// instructions it needs (SSSE3), for the caller to check another way.
int cbytes_utf8_check(const void *bytes, size_t count);

#endif
