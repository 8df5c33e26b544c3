// src/layout.h: the contract between lib/ and the addon. The header checks
// itself with static_asserts; these tests check the export table lib/ reads
// (`binding.layout`, built from kConstants) and the StepAside names, at run
// time and name by name.
#include "layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fast_response {
namespace layout {
namespace {

std::map<std::string, uint32_t> ConstantsByName() {
  std::map<std::string, uint32_t> out;
  for (const Constant& c : kConstants) out[c.name] = c.value;
  return out;
}

TEST(Layout, ConstantNamesAreDistinctAndWellFormed) {
  std::set<std::string> names;
  for (const Constant& c : kConstants) {
    ASSERT_NE(c.name, nullptr);
    const std::string name = c.name;
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << "twice: " << name;
    // What lib/ destructures: UPPER_SNAKE_CASE.
    for (const char ch : name) {
      EXPECT_TRUE((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  ch == '_')
          << name;
    }
  }
  // STEP_ASIDE_NAMES is added by src/addon.cc next to these.
  EXPECT_EQ(names.count("STEP_ASIDE_NAMES"), 0u);
}

// The groups of kConstants, by name: each constant is in exactly one, and
// the values within a group are distinct.
struct Group {
  const char* what;
  std::vector<const char*> names;
  bool bits;  // one bit each
};

const std::vector<Group>& Groups() {
  static const std::vector<Group> groups = {
      {"args[] slots",
       {"ARG_FD", "ARG_STATUS_CODE", "ARG_FIELD_COUNT", "ARG_STATE_BITS",
        "ARG_KEEP_ALIVE_SECONDS", "ARG_MAX_REQUESTS", "ARG_BODY_FLAGS",
        "ARG_BODY_UNITS", "ARG_HEAD_UNITS", "ARG_WRITER", "ARG_BODY_TAG",
        "ARG_BODY_BYTES", "ARG_COUNT"},
       false},
      {"results[] slots",
       {"RESULT_REMAINING", "RESULT_BITS", "RESULT_BODY_LENGTH",
        "RESULT_WRITTEN", "RESULT_CONTENT_LENGTH", "RESULT_REASON",
        "RESULT_COUNT"},
       false},
      {"body kinds",
       {"BODY_NONE", "BODY_UTF8", "BODY_LATIN1", "BODY_BYTES"},
       false},
      // The body kinds' bits: BODY_BYTES by design (static_assert).
      {"body kind mask", {"BODY_KIND_MASK"}, false},
      {"body flags", {"HEAD_UTF8", "CHUNKED", "BODY_ENCODED"}, true},
      {"state bits",
       {"SEND_DATE", "SHOULD_KEEP_ALIVE", "USE_CHUNKED_BY_DEFAULT", "HAS_BODY",
        "REMOVED_CONNECTION", "REMOVED_CONTENT_LENGTH",
        "REMOVED_TRANSFER_ENCODING", "MAX_REQUESTS_REACHED", "LAST",
        "KEEP_ALIVE_TIMEOUT_SET", "VALIDATE", "CONTENT_LENGTH_AS_FIELD",
        "AGENT"},
       true},
      {"result bits",
       {"RESULT_LAST", "RESULT_CHUNKED", "RESULT_SHOULD_KEEP_ALIVE",
        "RESULT_CONNECTION_FIELD", "RESULT_KEEP_ALIVE_FIELD",
        "RESULT_CONTENT_LENGTH_FIELD", "RESULT_HEAD_ASCII"},
       true},
  };
  return groups;
}

TEST(Layout, EveryConstantInOneGroup) {
  const std::map<std::string, uint32_t> constants = ConstantsByName();
  std::map<std::string, int> seen;
  for (const Group& g : Groups()) {
    for (const char* name : g.names) {
      EXPECT_EQ(constants.count(name), 1u) << g.what << ": " << name;
      seen[name]++;
    }
  }
  for (const auto& [name, value] : constants) {
    EXPECT_EQ(seen[name], 1) << name << " = " << value
                             << " belongs to no group (or several): add it "
                                "to Groups()";
  }
}

TEST(Layout, ValuesDistinctWithinEachGroup) {
  const std::map<std::string, uint32_t> constants = ConstantsByName();
  for (const Group& g : Groups()) {
    std::map<uint32_t, std::string> values;
    uint32_t all_bits = 0;
    for (const char* name : g.names) {
      const uint32_t v = constants.at(name);
      const auto [at, fresh] = values.emplace(v, name);
      EXPECT_TRUE(fresh) << g.what << ": " << name << " and " << at->second
                         << " are both " << v;
      if (g.bits) {
        EXPECT_TRUE(v != 0 && (v & (v - 1)) == 0)
            << g.what << ": " << name << " = " << v << " is not one bit";
        EXPECT_EQ(all_bits & v, 0u) << g.what << ": " << name;
        all_bits |= v;
      }
    }
  }
}

TEST(Layout, SlotsBelowTheirCount) {
  const std::map<std::string, uint32_t> constants = ConstantsByName();
  const uint32_t args = constants.at("ARG_COUNT");
  const uint32_t results = constants.at("RESULT_COUNT");
  std::set<uint32_t> arg_slots, result_slots;
  for (const auto& [name, value] : constants) {
    if (name.rfind("ARG_", 0) == 0 && name != "ARG_COUNT") {
      EXPECT_LT(value, args) << name;
      arg_slots.insert(value);
    }
  }
  for (const char* name :
       {"RESULT_REMAINING", "RESULT_BITS", "RESULT_BODY_LENGTH",
        "RESULT_WRITTEN", "RESULT_CONTENT_LENGTH", "RESULT_REASON"}) {
    EXPECT_LT(constants.at(name), results) << name;
    result_slots.insert(constants.at(name));
  }
  // Every slot is used: the arrays have no hole.
  EXPECT_EQ(arg_slots.size(), args);
  EXPECT_EQ(result_slots.size(), results);
}

TEST(Layout, BodyFlagsAboveTheBodyKind) {
  const std::map<std::string, uint32_t> c = ConstantsByName();
  const uint32_t mask = c.at("BODY_KIND_MASK");
  for (const char* kind :
       {"BODY_NONE", "BODY_UTF8", "BODY_LATIN1", "BODY_BYTES"}) {
    EXPECT_EQ(c.at(kind) & ~mask, 0u) << kind;
  }
  EXPECT_EQ(c.at("HEAD_UTF8") & mask, 0u);
  EXPECT_EQ(c.at("CHUNKED") & mask, 0u);
  EXPECT_EQ(c.at("BODY_ENCODED") & mask, 0u);
}

TEST(Layout, ExportedValuesAreTheEnums) {
  // Spot checks that the table says what the enums say ...
  const std::map<std::string, uint32_t> c = ConstantsByName();
  EXPECT_EQ(c.at("ARG_STATE_BITS"), kArgStateBits);
  EXPECT_EQ(c.at("RESULT_REASON"), kResultReason);
  EXPECT_EQ(c.at("BODY_BYTES"), kBodyBytes);
  EXPECT_EQ(c.at("CHUNKED"), kChunked);
  EXPECT_EQ(c.at("BODY_ENCODED"), kBodyEncoded);
  EXPECT_EQ(c.at("CONTENT_LENGTH_AS_FIELD"), kContentLengthAsField);
  EXPECT_EQ(c.at("ARG_BODY_BYTES"), kArgBodyBytes);
  EXPECT_EQ(c.at("AGENT"), kAgent);
  EXPECT_EQ(c.at("RESULT_CONTENT_LENGTH_FIELD"), kResultContentLengthField);
  // ... and each group exports exactly the values the header's own
  // static_asserts list (layout::check).
  auto values = [&](const char* what) {
    std::set<uint32_t> out;
    for (const Group& g : Groups()) {
      if (std::string(g.what) != what) continue;
      for (const char* name : g.names) out.insert(c.at(name));
    }
    return out;
  };
  auto set_of = [](const uint32_t* v, size_t n, uint32_t extra) {
    std::set<uint32_t> out(v, v + n);
    if (extra != UINT32_MAX) out.insert(extra);
    return out;
  };
  EXPECT_EQ(values("args[] slots"),
            set_of(check::kArgs, std::size(check::kArgs), kArgCount));
  EXPECT_EQ(values("results[] slots"),
            set_of(check::kResults, std::size(check::kResults), kResultCount));
  EXPECT_EQ(
      values("state bits"),
      set_of(check::kStateBits, std::size(check::kStateBits), UINT32_MAX));
  EXPECT_EQ(
      values("result bits"),
      set_of(check::kResultBits, std::size(check::kResultBits), UINT32_MAX));
  EXPECT_EQ(
      values("body flags"),
      set_of(check::kBodyFlags, std::size(check::kBodyFlags), UINT32_MAX));
}

TEST(Layout, StepAsideNames) {
  std::set<std::string> names;
  EXPECT_STREQ(kStepAsideNames[kStepAsideNone], "");
  for (uint32_t i = 1; i < kStepAsideCount; i++) {
    ASSERT_NE(kStepAsideNames[i], nullptr) << i;
    const std::string name = kStepAsideNames[i];
    EXPECT_FALSE(name.empty()) << i;
    EXPECT_TRUE(names.insert(name).second) << "twice: " << name;
    // The stats() key lib/reasons.js describes: lower-case words and '-'.
    for (const char ch : name) {
      EXPECT_TRUE((ch >= 'a' && ch <= 'z') || ch == '-') << name;
    }
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kStepAsideCount) - 1);
  EXPECT_STREQ(kStepAsideNames[kStepAsideInvalid], "invalid");
  EXPECT_STREQ(kStepAsideNames[kStepAsideChunkedBody], "chunked-body");
}

}  // namespace
}  // namespace layout
}  // namespace fast_response
