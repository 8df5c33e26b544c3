#include "utf8.h"

#include <cstdint>
#include <cstring>

namespace fast_response {

namespace {

constexpr uint64_t kNonAsciiUnits = 0xFF80FF80FF80FF80ULL;

inline bool IsHighSurrogate(uint32_t c) { return c >= 0xD800 && c <= 0xDBFF; }
inline bool IsLowSurrogate(uint32_t c) { return c >= 0xDC00 && c <= 0xDFFF; }

}  // namespace

size_t EncodeUtf8(const char16_t* in, size_t units, char* out) {
  auto* o = reinterpret_cast<unsigned char*>(out);
  size_t i = 0;
  while (i < units) {
    // A run of ASCII, four units (eight bytes) at a time.
    while (i + 4 <= units) {
      uint64_t four;
      std::memcpy(&four, in + i, sizeof four);
      if ((four & kNonAsciiUnits) != 0) break;
      o[0] = static_cast<unsigned char>(in[i]);
      o[1] = static_cast<unsigned char>(in[i + 1]);
      o[2] = static_cast<unsigned char>(in[i + 2]);
      o[3] = static_cast<unsigned char>(in[i + 3]);
      o += 4;
      i += 4;
    }
    if (i == units) break;
    const uint32_t c = in[i++];
    if (c < 0x80) {
      *o++ = static_cast<unsigned char>(c);
    } else if (c < 0x800) {
      *o++ = static_cast<unsigned char>(0xC0 | (c >> 6));
      *o++ = static_cast<unsigned char>(0x80 | (c & 0x3F));
    } else if (IsHighSurrogate(c) && i < units && IsLowSurrogate(in[i])) {
      const uint32_t cp = 0x10000 + ((c - 0xD800) << 10) + (in[i++] - 0xDC00);
      *o++ = static_cast<unsigned char>(0xF0 | (cp >> 18));
      *o++ = static_cast<unsigned char>(0x80 | ((cp >> 12) & 0x3F));
      *o++ = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
      *o++ = static_cast<unsigned char>(0x80 | (cp & 0x3F));
    } else {
      // A lone surrogate is U+FFFD.
      const uint32_t cp = IsHighSurrogate(c) || IsLowSurrogate(c) ? 0xFFFD : c;
      *o++ = static_cast<unsigned char>(0xE0 | (cp >> 12));
      *o++ = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
      *o++ = static_cast<unsigned char>(0x80 | (cp & 0x3F));
    }
  }
  return static_cast<size_t>(reinterpret_cast<char*>(o) - out);
}

}  // namespace fast_response
