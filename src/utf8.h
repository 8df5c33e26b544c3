// UTF-16 to UTF-8, byte for byte as Node's socket writes a string given
// the 'utf8' encoding (V8's String::WriteUtf8 with REPLACE_INVALID_UTF8,
// node::StringBytes::Write): a surrogate pair as its code point's four
// bytes, a lone surrogate (a high one not followed by a low one, a low one
// not preceded by a high one) as U+FFFD (EF BF BD). Plain C++17: nothing
// here knows of JavaScript.
//
// Why not V8's own (napi_get_value_string_utf8): V8 encodes a string beyond
// ASCII a code unit at a time through its generic path, about 16
// instructions a byte under callgrind (Node 26.12.1, 8 KiB of "naïve "
// text: 128,832 instructions a response), where Node's own socket write
// takes simdutf's SIMD conversion (20,113). Read as UTF-16
// (napi_get_value_string_utf16: a copy, a widening one for V8's one-byte
// strings) and encoded here, ASCII eight bytes at a time.
#ifndef FAST_RESPONSE_UTF8_H_
#define FAST_RESPONSE_UTF8_H_

#include <cstddef>

namespace fast_response {

// The most bytes EncodeUtf8() writes for `units` UTF-16 code units: 3 a
// unit (a surrogate pair's 4 bytes are 2 a unit).
constexpr size_t MaxUtf8Bytes(size_t units) { return 3 * units; }

// Encodes `units` UTF-16 code units from `in` into `out` (room for
// MaxUtf8Bytes(units) bytes) as UTF-8; returns the bytes written.
size_t EncodeUtf8(const char16_t* in, size_t units, char* out);

}  // namespace fast_response

#endif  // FAST_RESPONSE_UTF8_H_
