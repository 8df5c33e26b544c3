// The contract between lib/ and the addon: every index, bit, sentinel and
// size that crosses between JavaScript and C++, defined here and nowhere
// else. src/addon.cc exports each one by name as `binding.layout` (the way
// Node's stream_wrap exports kBytesWritten with streamBaseState); lib/ reads
// them from there and keeps no copy. The fuzzer and the GoogleTest suite
// include this header too. Plain C++17: nothing here knows of Node-API.
//
// A call crosses like this: lib/ stores the numeric arguments in `args`
// (a Float64Array shared with the addon, slots kArg*), passes strings and
// the body as arguments, and reads what happened from `results` (slots
// kResult*). Numbers through a typed array cost JavaScript one store each;
// as Node-API arguments each would cost a call to read.
#ifndef FAST_RESPONSE_LAYOUT_H_
#define FAST_RESPONSE_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <iterator>

namespace fast_response {
namespace layout {

// --- args[]: the numeric arguments of the write calls ----------------------
enum Arg : uint32_t {
  kArgFd = 0,                // the socket's file descriptor
  kArgStatusCode = 1,        // 100..999
  kArgFieldCount = 2,        // header fields in the joined text
  kArgStateBits = 3,         // StateBit
  kArgKeepAliveSeconds = 4,  // Math.floor(keepAliveTimeout / 1000)
  kArgMaxRequests = 5,       // maxRequestsPerSocket, 0 for none
  kArgBodyFlags = 6,         // BodyKind | kHeadUtf8 | kChunked | kBodyEncoded
  kArgBodyUnits = 7,         // a string body's length in UTF-16 code units
  kArgHeadUnits = 8,         // writeRendered(): `_header.length`
  // The socket writer (openWriter()) whose batch the call joins, or -1: the
  // call writes at once, at kArgFd.
  kArgWriter = 9,
  // A Buffer body's tag in that writer, for pending() (0: the environment's
  // writer).
  kArgBodyTag = 10,
  // renderRequest(): the body's length in bytes (`_contentLength`);
  // renderResponse(): `_contentLength`, -1 where it is null.
  kArgBodyBytes = 11,
  kArgCount = 12,
};

// --- results[]: what a call reports ------------------------------------------
enum Result : uint32_t {
  kResultRemaining = 0,      // bytes the writev(2) did not take
  kResultBits = 1,           // ResultBit
  kResultBodyLength = 2,     // the body's length in bytes
  kResultWritten = 3,        // bytes writev(2) took, or -errno of a failure
  kResultContentLength = 4,  // last Content-Length field's value, or -1
  kResultReason = 5,         // StepAside: why nothing was written, or 0
  kResultCount = 6,
};

// --- args[kArgBodyFlags] -----------------------------------------------------
// The body's kind, as lib/ classifies it (the low bits).
enum BodyKind : uint32_t {
  kBodyNone = 0,    // nothing after the head (HEAD, 204, 304)
  kBodyUtf8 = 1,    // string, encoded as UTF-8
  kBodyLatin1 = 2,  // string, encoded as latin1 (also Node's 'ascii')
  kBodyBytes = 3,   // Buffer or Uint8Array, referenced, not copied
};
constexpr uint32_t kBodyKindMask = 3;
// Node sends `_header + chunk` as one UTF-8 string when the body is a UTF-8
// string (lib/_http_outgoing.js `_send()`), so a head byte >= 0x80 goes out
// UTF-8 encoded; with any other body the head goes out as latin1.
constexpr uint32_t kHeadUtf8 = 1u << 2;
// The head says `Transfer-Encoding: chunked` (writeHead() without
// Content-Length): the body goes out as one chunk and the last chunk.
constexpr uint32_t kChunked = 1u << 3;
// With kBodyUtf8: the body argument is not the string but its UTF-8 bytes,
// encoded by Node (Buffer.from(), lib/body.js bodyArgs()), which the addon
// copies as it copies an encoded string. V8's encoding through Node-API
// (napi_get_value_string_utf8()) takes about 16 instructions a byte beyond
// ASCII; Node 24+ encodes a latin1 string with simdutf.
constexpr uint32_t kBodyEncoded = 1u << 4;

// --- args[kArgStateBits]: the response state _storeHeader() reads ----------
enum StateBit : uint32_t {
  kSendDate = 1u << 0,
  kShouldKeepAlive = 1u << 1,
  kUseChunkedByDefault = 1u << 2,
  kHasBody = 1u << 3,
  kRemovedConnection = 1u << 4,
  kRemovedContentLength = 1u << 5,
  kRemovedTransferEncoding = 1u << 6,
  kMaxRequestsReached = 1u << 7,
  kLast = 1u << 8,
  kKeepAliveTimeoutSet = 1u << 9,
  kValidate = 1u << 10,  // check field-names and field-values as writeHead()
  // Content-Length goes after the caller's fields, as if the caller had
  // passed it to writeHead() (send(), template()); otherwise after the
  // Connection field, where _storeHeader() puts `_contentLength` (end()).
  kContentLengthAsField = 1u << 11,
  // An outgoing request with an http.Agent (`this.agent`): keep-alive is
  // sent whatever frames the body (_storeHeader()'s `|| this.agent`).
  kAgent = 1u << 12,
};

// --- results[kResultBits]: what the head decided ----------------------------
enum ResultBit : uint32_t {
  kResultLast = 1u << 0,             // `_last`
  kResultChunked = 1u << 1,          // `chunkedEncoding`
  kResultShouldKeepAlive = 1u << 2,  // `shouldKeepAlive`
  // The caller's fields held these (matchHeader(): `_removedConnection`,
  // `_defaultKeepAlive`, `_removedContLen` change).
  kResultConnectionField = 1u << 3,
  kResultKeepAliveField = 1u << 4,
  kResultContentLengthField = 1u << 5,
  // renderRequest(): every byte of the head is ASCII, so its latin1 bytes
  // are its UTF-8 bytes (writeRendered() may read it without kHeadUtf8).
  kResultHeadAscii = 1u << 6,
};

// --- results[kResultReason]: why nothing was written ------------------------
// lib/reasons.js gives each name its meaning; the name is what stats()
// counts.
enum StepAside : uint32_t {
  kStepAsideNone = 0,
  kStepAsideInvalid,             // Node's checks reject the head: it throws
  kStepAsideTransferEncoding,    // a Transfer-Encoding field of the caller's
  kStepAsideExpect,              // an Expect field
  kStepAsideTrailer,             // a Trailer field
  kStepAsideContentDisposition,  // a non-ASCII Content-Disposition
  kStepAsideChunkedBody,         // the head needs chunk framing
  kStepAsideCount,
};
inline constexpr const char* kStepAsideNames[kStepAsideCount] = {
    "",
    "invalid",
    "field-transfer-encoding",
    "field-expect",
    "field-trailer",
    "field-content-disposition",
    "chunked-body",
};

// --- the export: every constant above, by the name lib/ reads ---------------
struct Constant {
  const char* name;
  uint32_t value;
};
inline constexpr Constant kConstants[] = {
    {"ARG_FD", kArgFd},
    {"ARG_STATUS_CODE", kArgStatusCode},
    {"ARG_FIELD_COUNT", kArgFieldCount},
    {"ARG_STATE_BITS", kArgStateBits},
    {"ARG_KEEP_ALIVE_SECONDS", kArgKeepAliveSeconds},
    {"ARG_MAX_REQUESTS", kArgMaxRequests},
    {"ARG_BODY_FLAGS", kArgBodyFlags},
    {"ARG_BODY_UNITS", kArgBodyUnits},
    {"ARG_HEAD_UNITS", kArgHeadUnits},
    {"ARG_WRITER", kArgWriter},
    {"ARG_BODY_TAG", kArgBodyTag},
    {"ARG_BODY_BYTES", kArgBodyBytes},
    {"ARG_COUNT", kArgCount},
    {"RESULT_REMAINING", kResultRemaining},
    {"RESULT_BITS", kResultBits},
    {"RESULT_BODY_LENGTH", kResultBodyLength},
    {"RESULT_WRITTEN", kResultWritten},
    {"RESULT_CONTENT_LENGTH", kResultContentLength},
    {"RESULT_REASON", kResultReason},
    {"RESULT_COUNT", kResultCount},
    {"BODY_NONE", kBodyNone},
    {"BODY_UTF8", kBodyUtf8},
    {"BODY_LATIN1", kBodyLatin1},
    {"BODY_BYTES", kBodyBytes},
    {"BODY_KIND_MASK", kBodyKindMask},
    {"HEAD_UTF8", kHeadUtf8},
    {"CHUNKED", kChunked},
    {"BODY_ENCODED", kBodyEncoded},
    {"SEND_DATE", kSendDate},
    {"SHOULD_KEEP_ALIVE", kShouldKeepAlive},
    {"USE_CHUNKED_BY_DEFAULT", kUseChunkedByDefault},
    {"HAS_BODY", kHasBody},
    {"REMOVED_CONNECTION", kRemovedConnection},
    {"REMOVED_CONTENT_LENGTH", kRemovedContentLength},
    {"REMOVED_TRANSFER_ENCODING", kRemovedTransferEncoding},
    {"MAX_REQUESTS_REACHED", kMaxRequestsReached},
    {"LAST", kLast},
    {"KEEP_ALIVE_TIMEOUT_SET", kKeepAliveTimeoutSet},
    {"VALIDATE", kValidate},
    {"CONTENT_LENGTH_AS_FIELD", kContentLengthAsField},
    {"AGENT", kAgent},
    {"RESULT_LAST", kResultLast},
    {"RESULT_CHUNKED", kResultChunked},
    {"RESULT_SHOULD_KEEP_ALIVE", kResultShouldKeepAlive},
    {"RESULT_CONNECTION_FIELD", kResultConnectionField},
    {"RESULT_KEEP_ALIVE_FIELD", kResultKeepAliveField},
    {"RESULT_CONTENT_LENGTH_FIELD", kResultContentLengthField},
    {"RESULT_HEAD_ASCII", kResultHeadAscii},
};

// --- checked when this header compiles ---------------------------------------
namespace check {
constexpr bool Distinct(const uint32_t* v, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = i + 1; k < n; k++)
      if (v[i] == v[k]) return false;
  return true;
}
constexpr bool SingleBits(const uint32_t* v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == 0 || (v[i] & (v[i] - 1)) != 0) return false;
  return true;
}
constexpr uint32_t kArgs[] = {
    kArgFd,        kArgStatusCode,       kArgFieldCount,
    kArgStateBits, kArgKeepAliveSeconds, kArgMaxRequests,
    kArgBodyFlags, kArgBodyUnits,        kArgHeadUnits,
    kArgWriter,    kArgBodyTag,          kArgBodyBytes};
constexpr uint32_t kResults[] = {kResultRemaining,     kResultBits,
                                 kResultBodyLength,    kResultWritten,
                                 kResultContentLength, kResultReason};
constexpr uint32_t kStateBits[] = {kSendDate,
                                   kShouldKeepAlive,
                                   kUseChunkedByDefault,
                                   kHasBody,
                                   kRemovedConnection,
                                   kRemovedContentLength,
                                   kRemovedTransferEncoding,
                                   kMaxRequestsReached,
                                   kLast,
                                   kKeepAliveTimeoutSet,
                                   kValidate,
                                   kContentLengthAsField,
                                   kAgent};
constexpr uint32_t kResultBits[] = {kResultLast,
                                    kResultChunked,
                                    kResultShouldKeepAlive,
                                    kResultConnectionField,
                                    kResultKeepAliveField,
                                    kResultContentLengthField,
                                    kResultHeadAscii};
constexpr uint32_t kBodyFlags[] = {kHeadUtf8, kChunked, kBodyEncoded};

constexpr bool Below(const uint32_t* v, size_t n, uint32_t limit) {
  for (size_t i = 0; i < n; i++)
    if (v[i] >= limit) return false;
  return true;
}
}  // namespace check

static_assert(check::Distinct(check::kArgs, std::size(check::kArgs)) &&
                  check::Below(check::kArgs, std::size(check::kArgs),
                               kArgCount) &&
                  std::size(check::kArgs) == kArgCount,
              "every args[] slot once, below kArgCount");
static_assert(check::Distinct(check::kResults, std::size(check::kResults)) &&
                  check::Below(check::kResults, std::size(check::kResults),
                               kResultCount) &&
                  std::size(check::kResults) == kResultCount,
              "every results[] slot once, below kResultCount");
static_assert(check::SingleBits(check::kStateBits,
                                std::size(check::kStateBits)) &&
                  check::Distinct(check::kStateBits,
                                  std::size(check::kStateBits)),
              "state bits: one bit each, no two alike");
static_assert(check::SingleBits(check::kResultBits,
                                std::size(check::kResultBits)) &&
                  check::Distinct(check::kResultBits,
                                  std::size(check::kResultBits)),
              "result bits: one bit each, no two alike");
static_assert(
    check::SingleBits(check::kBodyFlags, std::size(check::kBodyFlags)) &&
        check::Distinct(check::kBodyFlags, std::size(check::kBodyFlags)) &&
        ((kHeadUtf8 | kChunked | kBodyEncoded) & kBodyKindMask) == 0 &&
        (kBodyUtf8 | kBodyLatin1 | kBodyBytes) == kBodyKindMask,
    "body flags: one bit each, above the body kind's bits");
static_assert(std::size(kStepAsideNames) == kStepAsideCount,
              "a name for every StepAside");

}  // namespace layout
}  // namespace fast_response

#endif  // FAST_RESPONSE_LAYOUT_H_
