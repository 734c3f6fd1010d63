// The byte-level work under every line the server reads or writes (the search for the bytes a JSON
// string must escape, the UTF-8 check of a line), in C for the processor's vector instructions, which
// Swift's SIMD types did not compile to here. The search is `static inline`, so that Swift inlines it
// where it is called.

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

/// Copies `bytes[start..<count]` into `output` from `output[*written]`, escaped for a JSON string
/// (`\"`, `\\`, `\n`, `\r`, `\t`, and `\u00XX` for other control bytes), until the bytes or the
/// room (`room` bytes in all) run out; advances `*written` and returns how far `bytes` were read. An
/// escape is written only with six bytes of room left.
///
/// Sixteen bytes a step are stored as they are before they are looked at: past a special byte they
/// are written over, so a run between escapes costs no copy call of its own.
static inline size_t cjson_escape(const uint8_t *bytes, size_t count, size_t start,
                                  uint8_t *output, size_t room, size_t *written) {
    static const char hex[] = "0123456789abcdef";
    size_t read = start, out = *written;
    while (read < count) {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"');
        const __m128i backslash = _mm_set1_epi8('\\');
        const __m128i lastControl = _mm_set1_epi8(0x1F);
        while (read + 16 <= count && out + 16 <= room) {
            const __m128i chunk = _mm_loadu_si128((const __m128i *)(bytes + read));
            _mm_storeu_si128((__m128i *)(output + out), chunk);
            const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(chunk, lastControl), chunk);
            const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)), control);
            const int found = _mm_movemask_epi8(special);
            if (found != 0) {
                const size_t plain = (size_t)__builtin_ctz((unsigned)found);
                read += plain;
                out += plain;
                break;
            }
            read += 16;
            out += 16;
        }
#endif
        if (read == count) break;
        const uint8_t byte = bytes[read];
        if (byte >= 0x20 && byte != '"' && byte != '\\') {
            if (out == room) break;
            output[out++] = byte;
            read++;
            continue;
        }
        if (room - out < 6) break;
        output[out] = '\\';
        switch (byte) {
        case '"': case '\\': output[out + 1] = byte; out += 2; break;
        case '\n': output[out + 1] = 'n'; out += 2; break;
        case '\r': output[out + 1] = 'r'; out += 2; break;
        case '\t': output[out + 1] = 't'; out += 2; break;
        default:
            output[out + 1] = 'u';
            output[out + 2] = '0';
            output[out + 3] = '0';
            output[out + 4] = (uint8_t)hex[byte >> 4];
            output[out + 5] = (uint8_t)hex[byte & 0xF];
            out += 6;
        }
        read++;
    }
    *written = out;
    return read;
}

/// Whether `bytes` are well-formed UTF-8 (no overlong form, no surrogate, nothing above U+10FFFF, no
/// sequence cut short): 1 when they are, 0 when not, and -1 when this processor lacks the vector
/// instructions it needs (SSSE3), for the caller to check another way.
int cjson_utf8_check(const void *bytes, size_t count);

#endif
