// libFuzzer target for src/head: arbitrary bytes become a status code, a
// reason phrase, header fields and the response state; they go through the
// checks the addon makes (src/addon.cc AppendStatusAndFields()), and what
// passes is rendered with HeadBuffer + FinishHead() and read back with a
// strict HTTP/1.1 response parser, Node's parser before llhttp
// (libhttp-parser-dev, -lhttp_parser). Properties:
//
//  1. Accepted exactly when Node accepts: status 100..999, the reason and
//     every field-value without a byte of Node's headerCharRegex
//     /[^\t\x20-\x7e\x80-\xff]/, every field-name a tokenRegExp token.
//  2. MatchField() records what Node's matchHeader() would (a std::regex of
//     Node's own RE_CONN_CLOSE / chunkExpression is the oracle).
//  3. FinishHead() appends what _storeHeader() appends and decides the same
//     `_last`, `chunkedEncoding`, `shouldKeepAlive` and
//     ERR_HTTP_TRAILER_INVALID, compared with StoreHeader() below, a line by
//     line transliteration of Node's JavaScript.
//  4. The parser reads back the same status, reason and fields, in order,
//     and the head ends exactly where the rendered bytes end; the body is
//     then framed as the head says (Content-Length, chunked, until close, or
//     none) and the message completes exactly at its end: the fields cannot
//     split the response.
//
// Input layout (FuzzedDataProvider): integers from the end (status, state
// bits, keep-alive seconds, max requests, content length), strings from the
// front: reason, then name/value pairs until the data runs out. A string
// ends at a backslash followed by any byte but a backslash ("\\" is one
// backslash), so a seed like `OK\ Content-Type\ text/plain\ ` is readable.
#include <fuzzer/FuzzedDataProvider.h>
#include <http_parser.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include "head.h"

using fast_response::DateCache;
using fast_response::FinishHead;
using fast_response::HeadBuffer;
using fast_response::HeadResult;
using fast_response::MessageState;

namespace {

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
  using namespace fast_response;
  const std::string key = AsciiLower(f.name);
  if (key == "connection")
    return kFieldConnection |
           (NodeWord(f.value, "close") ? kFieldConnectionClose
                                       : kFieldConnectionNotClose);
  if (key == "transfer-encoding")
    return kFieldTransferEncoding |
           (NodeWord(f.value, "chunked") ? kFieldChunked : 0u);
  if (key == "content-length") return kFieldContentLength;
  if (key == "date") return kFieldDate;
  if (key == "expect") return kFieldExpect;
  if (key == "trailer") return kFieldTrailer;
  if (key == "keep-alive") return kFieldKeepAlive;
  if (key == "content-disposition") {
    for (unsigned char c : f.value) {
      if (c >= 0x80) return kFieldContentDispositionNonAscii;
    }
  }
  return 0;
}

// --- _storeHeader(), transliterated ------------------------------------------

struct NodeOutgoing {
  // The response's own state (MessageState's fields, with Node's names).
  bool sendDate, shouldKeepAlive, useChunkedEncodingByDefault, _hasBody;
  bool _removedConnection, _removedContLen, _removedTE;
  bool maxRequestsOnConnectionReached, _last, keepAliveTimeoutSet;
  int64_t timeoutSeconds, _maxRequestsPerSocket;
  bool contentLengthIsNumber;
  int64_t _contentLength;
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

// --- reading the head back
// ----------------------------------------------------

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;  // well below the parser's 80 KB header limit
  g_head = nullptr;
  FuzzedDataProvider in(data, size);

  // --- the response -------------------------------------------------------
  const int status = in.ConsumeIntegralInRange<int>(-5, 1004);
  const uint16_t bits = in.ConsumeIntegral<uint16_t>();
  const int64_t keep_alive_s = in.ConsumeIntegral<int64_t>();
  const int64_t max_requests = in.ConsumeIntegral<int64_t>();
  int64_t content_length = in.ConsumeIntegral<int64_t>();
  if (!(bits & (1u << 12))) content_length = content_length % 600;  // small
  if (content_length < -1) content_length = -1;

  const std::string reason = in.ConsumeRandomLengthString(64);
  std::vector<Field> fields;
  while (in.remaining_bytes() > 0 && fields.size() < 64) {
    Field f;
    f.name = in.ConsumeRandomLengthString(48);
    f.value = in.ConsumeRandomLengthString(200);
    fields.push_back(std::move(f));
  }

  // --- 1. the addon's checks against Node's -------------------------------
  bool accepted = status >= 100 && status <= 999 &&
                  fast_response::IsFieldValue(U(reason), reason.size());
  for (const Field& f : fields) {
    accepted = accepted && fast_response::IsToken(U(f.name), f.name.size()) &&
               fast_response::IsFieldValue(U(f.value), f.value.size());
  }
  bool node_accepts =
      status >= 100 && status <= 999 && !NodeHasInvalidHeaderChar(reason);
  for (const Field& f : fields) {
    node_accepts = node_accepts && NodeIsToken(f.name) &&
                   !NodeHasInvalidHeaderChar(f.value);
  }
  CHECK(accepted == node_accepts);
  if (!accepted) return 0;

  // --- 2. render -----------------------------------------------------------
  MessageState state;
  state.send_date = bits & (1u << 0);
  state.should_keep_alive = bits & (1u << 1);
  state.use_chunked_encoding_by_default = !(bits & (1u << 2));  // HTTP/1.0
  // writeHead(): 1xx, 204 and 304 have no body; a HEAD request's neither.
  const bool no_body_status =
      status == 204 || status == 304 || (status >= 100 && status <= 199);
  state.has_body = !(bits & (1u << 3)) && !no_body_status;
  state.removed_connection = bits & (1u << 4);
  state.removed_content_length = bits & (1u << 5);
  state.removed_transfer_encoding = bits & (1u << 6);
  state.max_requests_on_connection_reached = bits & (1u << 7);
  state.last = bits & (1u << 8);
  state.keep_alive_timeout_set = bits & (1u << 9);
  state.keep_alive_timeout_s = keep_alive_s;
  state.max_requests = max_requests;
  state.content_length = content_length;
  // send() and template(): Content-Length as if the caller had passed it
  // (src/addon.cc kContentLengthAsField).
  const bool length_as_field = bits & (1u << 10);

  HeadBuffer head;
  head.AppendStatusLine(status, U(reason), reason.size());
  uint32_t flags = 0;
  for (const Field& f : fields) {
    head.AppendField(U(f.name), f.name.size(), U(f.value), f.value.size());
    const uint32_t match = fast_response::MatchField(
        U(f.name), f.name.size(), U(f.value), f.value.size());
    CHECK(match == NodeMatch(f));
    flags |= match;
  }
  std::vector<Field> given = fields;
  if (length_as_field) {
    if (state.has_body &&
        !(flags & (fast_response::kFieldContentLength |
                   fast_response::kFieldTransferEncoding)) &&
        content_length >= 0) {
      const std::string n = std::to_string(content_length);
      head.AppendField(U(std::string("Content-Length")), 14, U(n), n.size());
      flags |= fast_response::kFieldContentLength;
      given.push_back({"Content-Length", n});
    }
    state.content_length = -1;
  }

  DateCache date;
  const std::string date_before = date.Now();
  const HeadResult result = FinishHead(&head, flags, state, &date);
  const std::string date_after = date.Now();
  const std::string bytes(head.bytes());
  g_head = &bytes;
  g_parser_error = "";

  // --- 3. against _storeHeader() -------------------------------------------
  NodeOutgoing node;
  node.sendDate = state.send_date;
  node.shouldKeepAlive = state.should_keep_alive;
  node.useChunkedEncodingByDefault = state.use_chunked_encoding_by_default;
  node._hasBody = state.has_body;
  node._removedConnection = state.removed_connection;
  node._removedContLen = state.removed_content_length;
  node._removedTE = state.removed_transfer_encoding;
  node.maxRequestsOnConnectionReached =
      state.max_requests_on_connection_reached;
  node._last = state.last;
  node.keepAliveTimeoutSet = state.keep_alive_timeout_set;
  node.timeoutSeconds = state.keep_alive_timeout_s;
  node._maxRequestsPerSocket = state.max_requests;
  node.contentLengthIsNumber = state.content_length >= 0;
  node._contentLength = state.content_length;
  // The Date value is the one second it was rendered in.
  const size_t date_at = bytes.find("\r\nDate: ");
  std::string date_value = date_before;
  if (date_at != std::string::npos &&
      bytes.compare(date_at + 8, DateCache::kLength, date_after) == 0)
    date_value = date_after;
  std::vector<Field> appended = StoreHeader(&node, given, date_value);

  CHECK(result.last == node._last);
  CHECK(result.chunked_encoding == node.chunkedEncoding);
  CHECK(result.should_keep_alive == node.shouldKeepAlive);
  CHECK(result.trailer_invalid == node.threw);

  std::string expected =
      "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
  std::vector<Field> all = given;
  all.insert(all.end(), appended.begin(), appended.end());
  for (const Field& f : all) expected += f.name + ": " + f.value + "\r\n";
  expected += "\r\n";
  CHECK(bytes == expected);
  if (result.trailer_invalid) return 0;  // Node throws: nothing is sent

  // --- 4. read it back
  // --------------------------------------------------------
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

  // Framing fields of the caller's own are sent as given (Node checks
  // neither a Content-Length value nor Transfer-Encoding next to
  // Content-Length); the parser may refuse those, and only those.
  // http_parser 2.9.4 also takes any field-name that starts with
  // "transfer-encoding" ("Transfer-Encodingx") for Transfer-Encoding: it
  // sets `uses_transfer_encoding` as soon as the prefix matched.
  bool own_framing = false;
  for (const Field& f : fields) {
    own_framing = own_framing ||
                  (NodeMatch(f) & (fast_response::kFieldContentLength |
                                   fast_response::kFieldTransferEncoding)) ||
                  AsciiLower(f.name).rfind("transfer-encoding", 0) == 0;
  }
  const size_t n = Execute(&parser, settings, bytes);
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
  CHECK(parsed.headers_complete == 1);
  CHECK(parser.status_code == static_cast<unsigned>(status));
  CHECK(parser.http_major == 1 && parser.http_minor == 1);
  CHECK(parsed.reason == reason);
  CHECK(parsed.fields.size() == all.size());
  for (size_t i = 0; i < all.size(); i++) {
    CHECK(parsed.fields[i].name == all[i].name);
    CHECK(parsed.fields[i].value == WithoutLeadingWhitespace(all[i].value));
  }
  // Nothing after the head was taken for part of it.
  CHECK(n == bytes.size());

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
  std::string body;
  if (result.chunked_encoding) {
    CHECK(length == -1);
    body = "5\r\nhello\r\n0\r\n\r\n";
  } else if (length >= 0) {
    if (length > 4096) return 0;
    body.assign(static_cast<size_t>(length), 'b');
  } else {
    // Neither length nor chunked: Node closes the connection after it.
    CHECK(result.last);
    body = "until the connection closes";
  }
  if (body.empty()) {
    // Content-Length: 0: complete with the head.
    CHECK(parsed.messages_complete == 1);
    return 0;
  }
  CHECK(parsed.messages_complete == 0);
  if (length >= 0 || result.chunked_encoding) {
    const size_t m = Execute(&parser, settings, body + "X");
    CHECK(HTTP_PARSER_ERRNO(&parser) == HPE_PAUSED);
    CHECK(parsed.messages_complete == 1);
    CHECK(m == body.size());
    if (length >= 0) CHECK(parsed.body == body);
    if (result.chunked_encoding) CHECK(parsed.body == "hello");
  } else {
    const size_t m = Execute(&parser, settings, body);
    CHECK(m == body.size());
    CHECK(parsed.messages_complete == 0);
    http_parser_execute(&parser, &settings, nullptr, 0);  // EOF
    CHECK(parsed.messages_complete == 1);
    CHECK(parsed.body == body);
  }
  return 0;
}
