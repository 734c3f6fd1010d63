// The byte search is `static inline` in include/CBytes.h; the UTF-8 check is here.
#include "CBytes.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <tmmintrin.h>

// MARK: - UTF-8, sixteen bytes a step

// The algorithm of Keiser and Lemire, "Validating UTF-8 in less than one instruction per byte"
// (Software: Practice and Experience, 2021), as simdjson implements it. Each byte is looked at with
// the one before it: three table lookups (the high and low half of the byte before, the high half of
// this one) give a set of error bits, all of which must be set for the pair to be wrong. The bytes two
// and three places after a three- or four-byte lead must be continuations, which the pair tables
// cannot see: they are compared apart.

enum {
    TOO_SHORT = 1 << 0,      // a lead byte, then no continuation
    TOO_LONG = 1 << 1,       // ASCII, then a continuation
    OVERLONG_3 = 1 << 2,     // E0 80–9F
    TOO_LARGE = 1 << 3,      // F4 90–BF, F5–FF 90–BF
    SURROGATE = 1 << 4,      // ED A0–BF
    OVERLONG_2 = 1 << 5,     // C0–C1, then a continuation
    TOO_LARGE_1000 = 1 << 6, // F5–FF 80–8F
    OVERLONG_4 = 1 << 6,     // F0 80–8F
    TWO_CONTS = 1 << 7,      // a continuation, then another (wrong unless a lead three or four back)
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS,
};

__attribute__((target("ssse3")))
static int utf8_check_ssse3(const uint8_t *bytes, size_t count) {
    const __m128i firstHigh = _mm_setr_epi8(
        TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,
        (char)TWO_CONTS, (char)TWO_CONTS, (char)TWO_CONTS, (char)TWO_CONTS,
        TOO_SHORT | OVERLONG_2,
        TOO_SHORT,
        TOO_SHORT | OVERLONG_3 | SURROGATE,
        TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4);
    const __m128i firstLow = _mm_setr_epi8(
        (char)(CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4),
        (char)(CARRY | OVERLONG_2),
        (char)CARRY,
        (char)CARRY,
        (char)(CARRY | TOO_LARGE),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000),
        (char)(CARRY | TOO_LARGE | TOO_LARGE_1000));
    const __m128i secondHigh = _mm_setr_epi8(
        TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4),
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE),
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE),
        (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE),
        TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT);
    const __m128i nibble = _mm_set1_epi8(0x0F);
    // A block's last three bytes may begin a character the next block must finish: above these, they do.
    const __m128i lastComplete = _mm_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)(0xF0 - 1), (char)(0xE0 - 1), (char)(0xC0 - 1));

    __m128i error = _mm_setzero_si128();
    __m128i previous = _mm_setzero_si128();
    __m128i previousIncomplete = _mm_setzero_si128();
    size_t index = 0;
    while (index < count) {
        __m128i input;
        if (index + 16 <= count) {
            input = _mm_loadu_si128((const __m128i *)(bytes + index));
        } else {
            // The last, short block, padded with zeros (ASCII): a character it cuts short is caught.
            uint8_t last[16] = {0};
            memcpy(last, bytes + index, count - index);
            input = _mm_loadu_si128((const __m128i *)last);
        }
        index += 16;
        if (_mm_movemask_epi8(input) == 0) {
            // ASCII: right unless the block before left a character unfinished.
            error = _mm_or_si128(error, previousIncomplete);
            previousIncomplete = _mm_setzero_si128();
            previous = input;
            continue;
        }
        const __m128i before1 = _mm_alignr_epi8(input, previous, 15);
        const __m128i before2 = _mm_alignr_epi8(input, previous, 14);
        const __m128i before3 = _mm_alignr_epi8(input, previous, 13);
        const __m128i pairErrors = _mm_and_si128(
            _mm_and_si128(
                _mm_shuffle_epi8(firstHigh, _mm_and_si128(_mm_srli_epi16(before1, 4), nibble)),
                _mm_shuffle_epi8(firstLow, _mm_and_si128(before1, nibble))),
            _mm_shuffle_epi8(secondHigh, _mm_and_si128(_mm_srli_epi16(input, 4), nibble)));
        // Two places after E0–FF, or three after F0–FF, a continuation must stand: the high bit here.
        const __m128i third = _mm_subs_epu8(before2, _mm_set1_epi8((char)(0xE0 - 0x80)));
        const __m128i fourth = _mm_subs_epu8(before3, _mm_set1_epi8((char)(0xF0 - 0x80)));
        const __m128i mustContinue = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
        // TWO_CONTS is the high bit too: set exactly where a continuation follows a continuation.
        error = _mm_or_si128(error, _mm_xor_si128(mustContinue, pairErrors));
        previousIncomplete = _mm_subs_epu8(input, lastComplete);
        previous = input;
    }
    error = _mm_or_si128(error, previousIncomplete);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(error, _mm_setzero_si128())) == 0xFFFF;
}

/// Whether the processor has SSSE3 (every x86-64 made since about 2008, but not x86-64's baseline, which
/// this is compiled for), asked once.
static int hasSSSE3(void) {
    static _Atomic int known = -1;
    int has = atomic_load_explicit(&known, memory_order_relaxed);
    if (has < 0) {
        unsigned a, b, c, d;
        has = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) != 0;
        atomic_store_explicit(&known, has, memory_order_relaxed);
    }
    return has;
}

int cbytes_utf8_check(const void *bytes, size_t count) {
    return hasSSSE3() ? utf8_check_ssse3((const uint8_t *)bytes, count) : -1;
}

#else

int cbytes_utf8_check(const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return -1;
}

#endif
