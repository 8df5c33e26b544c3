// src/utf8.h: EncodeUtf8() against fixed vectors (Node's bytes for a string
// written 'utf8': a lone surrogate is U+FFFD) and against a reference that
// first decodes code points, over random strings of every unit class.
#include "utf8.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace fast_response {
namespace {

std::string Encode(const std::u16string& s) {
  std::string out(MaxUtf8Bytes(s.size()), '\0');
  out.resize(EncodeUtf8(s.data(), s.size(), out.data()));
  return out;
}

// Code points first (a pair joined, a lone surrogate as U+FFFD), then
// each as UTF-8.
std::string Reference(const std::u16string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    uint32_t c = s[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (s[++i] - 0xDC00);
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

TEST(EncodeUtf8, AsciiLatin1AndTheBasicPlane) {
  EXPECT_EQ(Encode(u""), "");
  EXPECT_EQ(Encode(u"hello, world"), "hello, world");
  EXPECT_EQ(Encode(u"na\u00efve caf\u00e9"), "na\xc3\xafve caf\xc3\xa9");
  EXPECT_EQ(Encode(u"\u00ff\u0100\u07ff\u0800"),
            "\xc3\xbf\xc4\x80\xdf\xbf\xe0\xa0\x80");
  EXPECT_EQ(Encode(u"\u20ac 5"), "\xe2\x82\xac 5");
  EXPECT_EQ(Encode(u"\u65e5\u672c\uffff"),
            "\xe6\x97\xa5\xe6\x9c\xac\xef\xbf\xbf");
}

TEST(EncodeUtf8, SurrogatePairsAndLoneSurrogates) {
  EXPECT_EQ(Encode(u"\U0001F600"), "\xf0\x9f\x98\x80");
  EXPECT_EQ(Encode(u"a\U0010FFFFb"),
            "a\xf4\x8f\xbf\xbf"
            "b");
  // Lone: a high one at the end, a high one before a non-low, a low one
  // first, two highs, a low then a high.
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(Encode(std::u16string{u'a', 0xD83D}), "a" + fffd);
  EXPECT_EQ(Encode(std::u16string{0xD83D, u'x'}), fffd + "x");
  EXPECT_EQ(Encode(std::u16string{0xDE00, u'x'}), fffd + "x");
  EXPECT_EQ(Encode(std::u16string{0xD83D, 0xD83D, 0xDE00}),
            fffd + "\xf0\x9f\x98\x80");
  EXPECT_EQ(Encode(std::u16string{0xDE00, 0xD83D}), fffd + fffd);
}

TEST(EncodeUtf8, AsciiRunsAcrossTheFourUnitSteps) {
  // Each length and each position of one unit beyond ASCII in a run.
  for (size_t n = 0; n < 20; n++) {
    for (size_t at = 0; at <= n; at++) {
      std::u16string s(n, u'x');
      if (at < n) s[at] = 0xE9;
      EXPECT_EQ(Encode(s), Reference(s)) << "n=" << n << " at=" << at;
    }
  }
}

TEST(EncodeUtf8, RandomStringsAsTheReference) {
  std::mt19937 random(20261207);
  const uint32_t kClasses[][2] = {
      {0x20, 0x7E},    {0x00, 0x7F},     {0x80, 0xFF},     {0x100, 0x7FF},
      {0x800, 0xD7FF}, {0xD800, 0xDBFF}, {0xDC00, 0xDFFF}, {0xE000, 0xFFFF},
  };
  for (int round = 0; round < 20000; round++) {
    std::u16string s(random() % 48, u'\0');
    // Mostly ASCII with a few classes mixed in, or any class anywhere.
    const bool mostlyAscii = random() % 2 == 0;
    for (auto& unit : s) {
      const auto& c =
          kClasses[mostlyAscii && random() % 4 != 0 ? 0 : random() % 8];
      unit = static_cast<char16_t>(c[0] + random() % (c[1] - c[0] + 1));
    }
    const std::string encoded = Encode(s);
    ASSERT_EQ(encoded, Reference(s)) << "round " << round;
    ASSERT_LE(encoded.size(), MaxUtf8Bytes(s.size()));
  }
}

}  // namespace
}  // namespace fast_response
