// libFuzzer target for the addon's head pipeline, the functions
// src/addon.cc calls for writeResponse(): arbitrary bytes become a status
// code, a reason phrase, header fields, layout::StateBit bits and a body
// length; the reason and fields are joined into the NUL-separated text lib/
// sends ("reason\0name\0value\0..."), rendered with RenderStatusAndFields()
// (validate=true), the state comes from StateFromBits() (with kHasBody
// cleared for 1xx/204/304 as writeHead() does), FinishResponseHead()
// completes the head (Content-Length as a field when kContentLengthAsField)
// and a Writer queues head and body as the addon does. What goes out is
// read back with a strict HTTP/1.1 response parser, Node's parser before
// llhttp (libhttp-parser-dev, -lhttp_parser). Properties:
//
//  1. Accepted exactly when Node accepts: status 100..999, the reason and
//     every field-value without a byte of Node's headerCharRegex
//     /[^\t\x20-\x7e\x80-\xff]/ (NUL included: a NUL of the caller's also
//     splits the text into a part too many), every field-name a tokenRegExp
//     token. validate=false accepts exactly the texts that split right with
//     a valid status and reason, and renders the same bytes.
//  2. MatchField() records what Node's matchHeader() would (a std::regex of
//     Node's own RE_CONN_CLOSE / chunkExpression is the oracle); the
//     FieldsResult is their union, and its content_length the last
//     Content-Length field's value when it is 1 to 15 plain digits.
//  3. The step-aside reason is what the transliteration implies: a
//     Transfer-Encoding, Expect, Trailer or non-ASCII Content-Disposition
//     field (first in that order), else chunked framing with a body.
//  4. A head that does not step aside (and one stepping aside for chunked
//     framing, which Node then renders) is byte for byte what
//     StoreHeader() below, a line by line transliteration of Node's
//     _storeHeader(), renders; ResultBits agree with its `_last`,
//     `chunkedEncoding`, `shouldKeepAlive` and with the fields given.
//  5. The Writer's parts are the head (UTF-8 encoded by AppendLatin1AsUtf8()
//     when the body is a UTF-8 string, checked against a reference) and the
//     body, in that order, though the body was copied first.
//  6. The parser reads back the same status, reason and fields, in order,
//     and the head ends exactly where the rendered bytes end; the body is
//     then framed as the head says (Content-Length of the body's length,
//     chunked with AppendChunkSizeLine() and kChunkEnd as writeRendered()
//     frames it, until close, or none) and the message completes exactly at
//     its end: the fields cannot split the response.
//
// Input layout (FuzzedDataProvider): integers from the end (status, bits,
// keep-alive seconds, max requests, body length), strings from the front:
// reason, then name/value pairs until the data runs out. A string ends at a
// backslash followed by any byte but a backslash ("\\" is one backslash),
// so a seed like `OK\ Content-Type\ text/plain\ ` is readable. The low bits
// of `bits` are layout::StateBit; the fuzzer's own options are above them
// (kFuzz* below). test/fuzz/make-corpus.js writes seeds in this layout.
#include <fuzzer/FuzzedDataProvider.h>
#include <http_parser.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "head.h"
#include "layout.h"
#include "message.h"
#include "writer.h"

namespace fr = fast_response;
namespace layout = fast_response::layout;

namespace {

// The fuzzer's options, above every layout::StateBit.
constexpr uint32_t kFuzzLargeBody = 1u << 13;   // body length up to 2^53 - 1
constexpr uint32_t kFuzzHeadUtf8 = 1u << 14;    // a UTF-8 string body
constexpr uint32_t kFuzzBufferBody = 1u << 15;  // a Buffer body (external)

constexpr uint32_t AllStateBits() {
  uint32_t all = 0;
  for (const uint32_t b : layout::check::kStateBits) all |= b;
  return all;
}
static_assert((AllStateBits() &
               (kFuzzLargeBody | kFuzzHeadUtf8 | kFuzzBufferBody)) == 0,
              "the fuzzer's options collide with layout::StateBit");
static_assert(AllStateBits() < kFuzzLargeBody,
              "a layout::StateBit above 1 << 12: move the kFuzz* bits (and "
              "test/fuzz/make-corpus.js)");

// The body lengths that can cross from JavaScript: at most
// Number.MAX_SAFE_INTEGER.
constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;
// Bodies up to this length are made and sent; longer ones only framed.
constexpr uint64_t kMaxMadeBody = 4096;

// The head under test, printed when a check fails.
const std::string* g_head = nullptr;
const char* g_parser_error = "";

void Fail(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, cond);
  if (g_head != nullptr) {
    std::fprintf(stderr, "head (%zu bytes): \"", g_head->size());
    for (unsigned char c : *g_head) {
      if (c == '\r')
        std::fprintf(stderr, "\\r");
      else if (c == '\n')
        std::fprintf(stderr, "\\n\"\n  \"");
      else if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
        std::fprintf(stderr, "\\x%02x", c);
      else
        std::fputc(c, stderr);
    }
    std::fprintf(stderr, "\"\nparser: %s\n", g_parser_error);
  }
  std::abort();
}

#define CHECK(cond)                               \
  do {                                            \
    if (!(cond)) Fail(__FILE__, __LINE__, #cond); \
  } while (0)

const uint8_t* U(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

struct Field {
  std::string name;
  std::string value;
};

// --- Node's checks, spelled out from their source ---------------------------

// lib/_http_common.js tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/
bool NodeIsToken(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') ||
                    (c != 0 && std::strchr("^_`-!#$%&'*+.|~", c) != nullptr);
    if (!ok) return false;
  }
  return true;
}

// lib/_http_common.js headerCharRegex = /[^\t\x20-\x7e\x80-\xff]/
bool NodeHasInvalidHeaderChar(const std::string& s) {
  for (unsigned char c : s) {
    if (!(c == '\t' || (c >= 0x20 && c <= 0x7e) || c >= 0x80)) return true;
  }
  return false;
}

std::string AsciiLower(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// RE_CONN_CLOSE and chunkExpression, as ECMAScript regular expressions.
bool NodeWord(const std::string& value, const char* word) {
  static const std::regex kClose("(?:^|\\W)close(?:$|\\W)",
                                 std::regex::ECMAScript | std::regex::icase);
  static const std::regex kChunked("(?:^|\\W)chunked(?:$|\\W)",
                                   std::regex::ECMAScript | std::regex::icase);
  return std::regex_search(value,
                           std::strcmp(word, "close") == 0 ? kClose : kChunked);
}

// What matchHeader() (and processHeader() for content-disposition) records.
uint32_t NodeMatch(const Field& f) {
  const std::string key = AsciiLower(f.name);
  if (key == "connection")
    return fr::kFieldConnection |
           (NodeWord(f.value, "close") ? fr::kFieldConnectionClose
                                       : fr::kFieldConnectionNotClose);
  if (key == "transfer-encoding")
    return fr::kFieldTransferEncoding |
           (NodeWord(f.value, "chunked") ? fr::kFieldChunked : 0u);
  if (key == "content-length") return fr::kFieldContentLength;
  if (key == "date") return fr::kFieldDate;
  if (key == "expect") return fr::kFieldExpect;
  if (key == "trailer") return fr::kFieldTrailer;
  if (key == "keep-alive") return fr::kFieldKeepAlive;
  if (key == "content-disposition") {
    for (unsigned char c : f.value) {
      if (c >= 0x80) return fr::kFieldContentDispositionNonAscii;
    }
  }
  return 0;
}

bool HasField(const std::vector<Field>& fields, const char* lower) {
  for (const Field& f : fields) {
    if (AsciiLower(f.name) == lower) return true;
  }
  return false;
}

// The fields the fast path leaves to Node, first match in this order
// (lib/reasons.js: field-transfer-encoding, field-expect, field-trailer,
// field-content-disposition).
layout::StepAside NodeFieldStepAside(const std::vector<Field>& fields) {
  if (HasField(fields, "transfer-encoding"))
    return layout::kStepAsideTransferEncoding;
  if (HasField(fields, "expect")) return layout::kStepAsideExpect;
  if (HasField(fields, "trailer")) return layout::kStepAsideTrailer;
  for (const Field& f : fields) {
    if (AsciiLower(f.name) != "content-disposition") continue;
    for (unsigned char c : f.value) {
      if (c >= 0x80) return layout::kStepAsideContentDisposition;
    }
  }
  return layout::kStepAsideNone;
}

// What `+value` reads the same way in the plain case: the last
// Content-Length field's value when it is 1 to 15 decimal digits, else -1.
int64_t PlainContentLength(const std::vector<Field>& fields) {
  int64_t out = -1;
  for (const Field& f : fields) {
    if (AsciiLower(f.name) != "content-length") continue;
    const std::string& v = f.value;
    bool plain = !v.empty() && v.size() <= 15;
    for (char c : v) plain = plain && c >= '0' && c <= '9';
    out = plain ? std::stoll(v) : -1;
  }
  return out;
}

// A latin1 string sent as part of a UTF-8 string: each byte is the code
// point U+0000..U+00FF.
std::string Utf8Of(const std::string& latin1) {
  std::string out;
  for (unsigned char c : latin1) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// --- _storeHeader(), transliterated ------------------------------------------

struct NodeOutgoing {
  // The response's own state (MessageState's fields, with Node's names).
  bool sendDate, shouldKeepAlive, useChunkedEncodingByDefault, _hasBody;
  bool _removedConnection, _removedContLen, _removedTE;
  bool maxRequestsOnConnectionReached, _last, keepAliveTimeoutSet;
  int64_t timeoutSeconds, _maxRequestsPerSocket;
  bool contentLengthIsNumber;
  uint64_t _contentLength;
  bool chunkedEncoding = false;
  bool _defaultKeepAlive = true;
  bool threw = false;  // ERR_HTTP_TRAILER_INVALID
};

// Returns the fields _storeHeader() adds after the caller's `fields`.
std::vector<Field> StoreHeader(NodeOutgoing* self,
                               const std::vector<Field>& fields,
                               const std::string& date) {
  struct {
    bool connection = false, contLen = false, te = false, date = false,
         trailer = false;
  } state;
  for (const Field& f : fields) {  // matchHeader()
    const std::string field = AsciiLower(f.name);
    if (field == "connection") {
      state.connection = true;
      self->_removedConnection = false;
      if (NodeWord(f.value, "close"))
        self->_last = true;
      else
        self->shouldKeepAlive = true;
    } else if (field == "transfer-encoding") {
      state.te = true;
      self->_removedTE = false;
      if (NodeWord(f.value, "chunked")) self->chunkedEncoding = true;
    } else if (field == "content-length") {
      state.contLen = true;
      self->_removedContLen = false;
    } else if (field == "date") {
      state.date = true;
    } else if (field == "trailer") {
      state.trailer = true;
    } else if (field == "keep-alive") {
      self->_defaultKeepAlive = false;
    }
  }
  std::vector<Field> header;
  if (self->sendDate && !state.date) header.push_back({"Date", date});
  // (The 204/304 + chunkedEncoding branch needs a Transfer-Encoding field:
  // the addon leaves those to Node.)
  if (self->_removedConnection) {
    self->_last = !self->shouldKeepAlive;
  } else if (!state.connection) {
    const bool shouldSendKeepAlive =
        self->shouldKeepAlive &&
        (state.contLen || self->useChunkedEncodingByDefault);
    if (shouldSendKeepAlive && self->maxRequestsOnConnectionReached) {
      header.push_back({"Connection", "close"});
    } else if (shouldSendKeepAlive) {
      header.push_back({"Connection", "keep-alive"});
      if (self->keepAliveTimeoutSet && self->_defaultKeepAlive) {
        std::string max;
        if (self->_maxRequestsPerSocket > 0)
          max = ", max=" + std::to_string(self->_maxRequestsPerSocket);
        header.push_back(
            {"Keep-Alive",
             "timeout=" + std::to_string(self->timeoutSeconds) + max});
      }
    } else {
      self->_last = true;
      header.push_back({"Connection", "close"});
    }
  }
  if (!state.contLen && !state.te) {
    if (!self->_hasBody) {
      self->chunkedEncoding = false;
    } else if (!self->useChunkedEncodingByDefault) {
      self->_last = true;
    } else if (!state.trailer && !self->_removedContLen &&
               self->contentLengthIsNumber) {
      header.push_back(
          {"Content-Length", std::to_string(self->_contentLength)});
    } else if (!self->_removedTE) {
      header.push_back({"Transfer-Encoding", "chunked"});
      self->chunkedEncoding = true;
    } else {
      self->_last = true;
    }
  }
  if (self->chunkedEncoding != true && state.trailer) self->threw = true;
  return header;
}

// --- reading the head back ---------------------------------------------------

struct Parsed {
  std::string reason;
  std::vector<Field> fields;
  int headers_complete = 0;
  int messages_complete = 0;
  bool skip_body = false;  // a HEAD request's response, or 1xx/204/304
  std::string body;
};

Parsed* P(http_parser* p) { return static_cast<Parsed*>(p->data); }

int OnStatus(http_parser* p, const char* at, size_t n) {
  P(p)->reason.append(at, n);
  return 0;
}
// The head is handed over in one piece: one callback per name and value.
int OnHeaderField(http_parser* p, const char* at, size_t n) {
  P(p)->fields.push_back({std::string(at, n), std::string()});
  return 0;
}
int OnHeaderValue(http_parser* p, const char* at, size_t n) {
  CHECK(!P(p)->fields.empty() && P(p)->fields.back().value.empty());
  P(p)->fields.back().value.assign(at, n);
  return 0;
}
int OnHeadersComplete(http_parser* p) {
  P(p)->headers_complete++;
  return P(p)->skip_body ? 1 : 0;
}
int OnBody(http_parser* p, const char* at, size_t n) {
  P(p)->body.append(at, n);
  return 0;
}
int OnMessageComplete(http_parser* p) {
  P(p)->messages_complete++;
  // Stop right there: any byte after the message would be a second one.
  http_parser_pause(p, 1);
  return 0;
}

// RFC 9112 §5.1: optional whitespace before a field-value is not part of
// it; http_parser drops it (and keeps trailing whitespace, as sent).
std::string WithoutLeadingWhitespace(const std::string& s) {
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) b++;
  return s.substr(b);
}

size_t Execute(http_parser* p, const http_parser_settings& settings,
               const std::string& data) {
  return http_parser_execute(p, &settings, data.data(), data.size());
}

// The Writer's pending parts, concatenated: what one writev(2) sends.
std::string Queued(const fr::Writer& w) {
  std::string out;
  for (size_t i = 0; i < w.pending_count(); i++) {
    const fr::Writer::Part p = w.pending(i);
    out.append(reinterpret_cast<const char*>(p.data), p.length);
  }
  return out;
}

// writeRendered() with kChunked (src/addon.cc SendBody()): Node's `_header`,
// then the body as one chunk and the last chunk.
std::string FrameChunked(const std::string& head, const std::string& body) {
  fr::Writer w;
  fr::HeadBuffer& cork = w.cork();
  cork.AppendRaw(head);
  w.SendCopied(0, head.size());
  const size_t line_at = cork.size();
  w.SendCopied(line_at, fr::AppendChunkSizeLine(&cork, body.size()));
  w.SendExternal(U(body), body.size());
  const size_t end_at = cork.size();
  cork.AppendRaw(fr::kChunkEnd);
  w.SendCopied(end_at, fr::kChunkEnd.size());
  return Queued(w);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;  // well below the parser's 80 KB header limit
  g_head = nullptr;
  FuzzedDataProvider in(data, size);

  // --- the response -------------------------------------------------------
  const int status = in.ConsumeIntegralInRange<int>(-5, 1004);
  const uint32_t bits = in.ConsumeIntegral<uint16_t>();
  const int64_t keep_alive_s = in.ConsumeIntegral<int64_t>();
  const int64_t max_requests = in.ConsumeIntegral<int64_t>();
  const uint64_t raw_length = in.ConsumeIntegral<uint64_t>();
  const uint64_t body_length = (bits & kFuzzLargeBody)
                                   ? raw_length % (kMaxSafeInteger + 1)
                                   : raw_length % 600;
  const bool head_utf8 = (bits & kFuzzHeadUtf8) != 0;
  const bool buffer_body = (bits & kFuzzBufferBody) != 0;

  const std::string reason = in.ConsumeRandomLengthString(64);
  std::vector<Field> fields;
  while (in.remaining_bytes() > 0 && fields.size() < 64) {
    Field f;
    f.name = in.ConsumeRandomLengthString(48);
    f.value = in.ConsumeRandomLengthString(200);
    fields.push_back(std::move(f));
  }

  // writeHead(): 1xx, 204 and 304 have no body (lib/ clears HAS_BODY, as
  // `_hasBody` is then false).
  // A response's state: kAgent is a request's (an outgoing request with an
  // agent), which the transliteration below does not model.
  uint32_t state_bits =
      bits & AllStateBits() & ~static_cast<uint32_t>(layout::kAgent);
  if (status == 204 || status == 304 || (status >= 100 && status <= 199))
    state_bits &= ~static_cast<uint32_t>(layout::kHasBody);
  const fr::MessageState state =
      fr::StateFromBits(state_bits, keep_alive_s, max_requests);
  const bool as_field = (state_bits & layout::kContentLengthAsField) != 0;

  // The text lib/headers.js joins.
  std::string text = reason + '\0';
  for (const Field& f : fields) {
    text += f.name + '\0';
    text += f.value + '\0';
  }
  const uint32_t count = static_cast<uint32_t>(fields.size());

  // The body as src/addon.cc holds it: a string body copied into the cork
  // buffer before the head is rendered, a Buffer body referenced.
  const bool make_body = state.has_body && body_length <= kMaxMadeBody;
  std::string body;
  if (make_body) {
    body.resize(body_length);
    for (size_t i = 0; i < body.size(); i++)
      body[i] = static_cast<char>('a' + i % 26);
  }
  fr::Writer writer;
  fr::HeadBuffer& cork = writer.cork();
  size_t body_at = 0;
  if (make_body && !buffer_body) {
    body_at = cork.size();
    cork.AppendRaw(body);
  }

  // --- 1. acceptance, against Node's -------------------------------------
  const size_t head_start = cork.size();
  const fr::FieldsResult rendered = fr::RenderStatusAndFields(
      &cork, status, U(text), text.size(), count, true);
  bool node_accepts =
      status >= 100 && status <= 999 && !NodeHasInvalidHeaderChar(reason);
  for (const Field& f : fields) {
    node_accepts = node_accepts && NodeIsToken(f.name) &&
                   !NodeHasInvalidHeaderChar(f.value);
  }
  CHECK(rendered.valid == node_accepts);

  // validate=false: only the status, the reason and the split are checked.
  {
    bool splits = reason.find('\0') == std::string::npos;
    for (const Field& f : fields) {
      splits = splits && f.name.find('\0') == std::string::npos &&
               f.value.find('\0') == std::string::npos;
    }
    fr::HeadBuffer unchecked;
    const fr::FieldsResult u = fr::RenderStatusAndFields(
        &unchecked, status, U(text), text.size(), count, false);
    CHECK(u.valid == (status >= 100 && status <= 999 &&
                      !NodeHasInvalidHeaderChar(reason) && splits));
    if (rendered.valid) {
      CHECK(unchecked.bytes() == cork.bytes().substr(head_start));
      CHECK(u.fields == rendered.fields);
      CHECK(u.content_length == rendered.content_length);
    }
  }
  if (!rendered.valid) return 0;

  // --- 2. the status line, the fields and what they say ------------------
  std::string expected_fields =
      "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
  uint32_t flags = 0;
  for (const Field& f : fields) {
    expected_fields += f.name + ": " + f.value + "\r\n";
    const uint32_t match =
        fr::MatchField(U(f.name), f.name.size(), U(f.value), f.value.size());
    CHECK(match == NodeMatch(f));
    flags |= match;
  }
  CHECK(cork.bytes().substr(head_start) == expected_fields);
  CHECK(rendered.fields == flags);
  CHECK(rendered.content_length == PlainContentLength(fields));

  // --- 3. complete the head ----------------------------------------------
  fr::DateCache date;
  const std::string date_before = date.Now();
  const fr::ResponseHead r = fr::FinishResponseHead(
      &cork, rendered.fields, state, as_field, body_length, &date);
  const std::string date_after = date.Now();
  const std::string head(cork.bytes().substr(head_start));
  g_head = &head;
  g_parser_error = "";

  // send() and template(): Content-Length as if the caller had passed it.
  std::vector<Field> given = fields;
  const bool add_length = as_field && (state_bits & layout::kHasBody) &&
                          !HasField(fields, "content-length") &&
                          !HasField(fields, "transfer-encoding");
  if (add_length)
    given.push_back({"Content-Length", std::to_string(body_length)});

  // The transliteration, from the bits themselves (not StateFromBits()).
  NodeOutgoing node;
  node.sendDate = state_bits & layout::kSendDate;
  node.shouldKeepAlive = state_bits & layout::kShouldKeepAlive;
  node.useChunkedEncodingByDefault = state_bits & layout::kUseChunkedByDefault;
  node._hasBody = state_bits & layout::kHasBody;
  node._removedConnection = state_bits & layout::kRemovedConnection;
  node._removedContLen = state_bits & layout::kRemovedContentLength;
  node._removedTE = state_bits & layout::kRemovedTransferEncoding;
  node.maxRequestsOnConnectionReached =
      state_bits & layout::kMaxRequestsReached;
  node._last = state_bits & layout::kLast;
  node.keepAliveTimeoutSet = state_bits & layout::kKeepAliveTimeoutSet;
  node.timeoutSeconds = keep_alive_s;
  node._maxRequestsPerSocket = max_requests;
  // end(data) sets `_contentLength` before the head is rendered; send()'s
  // writeHead() renders it before end() could.
  node.contentLengthIsNumber = !as_field;
  node._contentLength = body_length;
  // The Date value is the one second it was rendered in.
  const size_t date_at = head.find("\r\nDate: ");
  std::string date_value = date_before;
  if (date_at != std::string::npos &&
      head.compare(date_at + 8, fr::DateCache::kLength, date_after) == 0)
    date_value = date_after;
  const std::vector<Field> appended = StoreHeader(&node, given, date_value);

  // The step-aside reason.
  layout::StepAside reason_expected = NodeFieldStepAside(fields);
  if (reason_expected == layout::kStepAsideNone) {
    if (node.threw)
      reason_expected = layout::kStepAsideTrailer;
    else if (node.chunkedEncoding && node._hasBody)
      reason_expected = layout::kStepAsideChunkedBody;
  }
  CHECK(r.step_aside == reason_expected);
  if (r.step_aside != layout::kStepAsideNone &&
      r.step_aside != layout::kStepAsideChunkedBody)
    return 0;  // Node's path renders the head: nothing of ours goes out
  CHECK(r.content_length_added == add_length);

  // --- 4. the head and result bits, against _storeHeader() ---------------
  std::vector<Field> all = given;
  all.insert(all.end(), appended.begin(), appended.end());
  std::string expected = expected_fields;
  if (add_length)
    expected += "Content-Length: " + std::to_string(body_length) + "\r\n";
  for (const Field& f : appended) expected += f.name + ": " + f.value + "\r\n";
  expected += "\r\n";
  CHECK(head == expected);

  const uint32_t rb = r.result_bits;
  CHECK(((rb & layout::kResultLast) != 0) == node._last);
  CHECK(((rb & layout::kResultChunked) != 0) == node.chunkedEncoding);
  CHECK(((rb & layout::kResultShouldKeepAlive) != 0) == node.shouldKeepAlive);
  CHECK(((rb & layout::kResultConnectionField) != 0) ==
        HasField(given, "connection"));
  CHECK(((rb & layout::kResultKeepAliveField) != 0) ==
        HasField(given, "keep-alive"));
  CHECK(((rb & layout::kResultContentLengthField) != 0) ==
        HasField(given, "content-length"));
  uint32_t every_result_bit = 0;
  for (const uint32_t b : layout::check::kResultBits) every_result_bit |= b;
  CHECK((rb & ~every_result_bit) == 0);

  // --- 5. what the Writer sends ------------------------------------------
  std::string wire_head = head;  // the bytes that go out for the head
  if (r.step_aside == layout::kStepAsideNone) {
    size_t head_at = head_start;
    size_t head_bytes = head.size();
    if (head_utf8) {
      const size_t end = cork.size();
      const bool encoded =
          fr::AppendLatin1AsUtf8(&cork, cork.data() + head_start, head.size());
      wire_head = Utf8Of(head);
      CHECK(encoded == (wire_head != head));
      if (encoded) {
        head_at = end;
        head_bytes = cork.size() - end;
      }
      CHECK(cork.bytes().substr(head_start, head.size()) == head);
    }
    writer.SendCopied(head_at, head_bytes);
    if (make_body) {
      if (buffer_body) {
        writer.SendExternal(U(body), body.size());
      } else {
        writer.SendCopied(body_at, body.size());
      }
    }
    CHECK(writer.queued_bytes() == head_bytes + (make_body ? body.size() : 0));
    const std::string queued = Queued(writer);
    CHECK(queued.compare(0, wire_head.size(), wire_head) == 0);
    CHECK(queued.substr(wire_head.size()) == (make_body ? body : ""));
  } else {
    // Chunked framing: Node renders this head (== ours, above) and
    // writeRendered() sends it latin1 with the body framed as one chunk
    // (lib/gate.js chunkedFast(): a body of at least one byte).
    CHECK(node._hasBody && (rb & layout::kResultChunked));
  }

  // --- 6. read it back ----------------------------------------------------
  http_parser_settings settings;
  http_parser_settings_init(&settings);
  settings.on_status = OnStatus;
  settings.on_header_field = OnHeaderField;
  settings.on_header_value = OnHeaderValue;
  settings.on_headers_complete = OnHeadersComplete;
  settings.on_body = OnBody;
  settings.on_message_complete = OnMessageComplete;
  http_parser parser;
  http_parser_init(&parser, HTTP_RESPONSE);
  Parsed parsed;
  parsed.skip_body = !state.has_body;
  parser.data = &parsed;

  // Framing fields of the caller's own are sent as given (Node checks no
  // Content-Length value); the parser may refuse those, and only those.
  // http_parser 2.9.4 also takes any field-name that starts with
  // "transfer-encoding" ("Transfer-Encodingx") for Transfer-Encoding: it
  // sets `uses_transfer_encoding` as soon as the prefix matched.
  bool own_framing = false;
  for (const Field& f : fields) {
    own_framing = own_framing ||
                  (NodeMatch(f) &
                   (fr::kFieldContentLength | fr::kFieldTransferEncoding)) ||
                  AsciiLower(f.name).rfind("transfer-encoding", 0) == 0;
  }
  const size_t n = Execute(&parser, settings, wire_head);
  const http_errno err = HTTP_PARSER_ERRNO(&parser);
  g_parser_error = http_errno_name(err);
  if (err != HPE_OK && err != HPE_PAUSED) {
    CHECK(own_framing);
    CHECK(err == HPE_INVALID_CONTENT_LENGTH ||
          err == HPE_UNEXPECTED_CONTENT_LENGTH ||
          err == HPE_INVALID_TRANSFER_ENCODING);
    CHECK(parsed.headers_complete == 0);
    return 0;
  }
  // What the head says on the wire: UTF-8 encoded next to a UTF-8 body.
  auto wire = [&](const std::string& s) {
    return wire_head == head ? s : Utf8Of(s);
  };
  CHECK(parsed.headers_complete == 1);
  CHECK(parser.status_code == static_cast<unsigned>(status));
  CHECK(parser.http_major == 1 && parser.http_minor == 1);
  CHECK(parsed.reason == wire(reason));
  CHECK(parsed.fields.size() == all.size());
  for (size_t i = 0; i < all.size(); i++) {
    CHECK(parsed.fields[i].name == all[i].name);
    CHECK(parsed.fields[i].value ==
          WithoutLeadingWhitespace(wire(all[i].value)));
  }
  // Nothing after the head was taken for part of it.
  CHECK(n == wire_head.size());

  if (!state.has_body || parser.upgrade) {
    // No body (the client knows: HEAD request, 1xx, 204, 304): the message
    // is complete exactly at the head's end.
    CHECK(parsed.messages_complete == 1);
    return 0;
  }
  if (own_framing) return 0;  // the caller framed the body: not ours

  // The body as the head frames it, then a byte that must not be read.
  int64_t length = -1;
  for (const Field& f : all) {
    if (AsciiLower(f.name) == "content-length")
      length = std::strtoll(f.value.c_str(), nullptr, 10);
  }
  const bool chunked = (rb & layout::kResultChunked) != 0;
  if (chunked) {
    CHECK(length == -1);
  } else if (length >= 0) {
    // Content-Length: the body's length, as the addon sends it.
    CHECK(static_cast<uint64_t>(length) == body_length);
  } else {
    // Neither length nor chunked: Node closes the connection after it.
    CHECK(rb & layout::kResultLast);
  }
  if (!make_body) return 0;  // a length only framed, not made

  std::string sent;  // what follows the head
  if (chunked) {
    if (body.empty()) return 0;  // Node's end(''): not the addon's
    sent = FrameChunked(head, body).substr(head.size());
  } else {
    sent = Queued(writer).substr(wire_head.size());
  }
  if (length == 0) {
    // Content-Length: 0: complete with the head.
    CHECK(sent.empty());
    CHECK(parsed.messages_complete == 1);
    return 0;
  }
  CHECK(parsed.messages_complete == 0);
  if (length >= 0 || chunked) {
    const size_t m = Execute(&parser, settings, sent + "X");
    CHECK(HTTP_PARSER_ERRNO(&parser) == HPE_PAUSED);
    CHECK(parsed.messages_complete == 1);
    CHECK(m == sent.size());
    CHECK(parsed.body == body);
  } else {
    // (A length of 0 would be EOF to http_parser_execute().)
    if (!sent.empty()) CHECK(Execute(&parser, settings, sent) == sent.size());
    CHECK(parsed.messages_complete == 0);
    http_parser_execute(&parser, &settings, nullptr, 0);  // EOF
    CHECK(parsed.messages_complete == 1);
    CHECK(parsed.body == body);
  }
  return 0;
}
