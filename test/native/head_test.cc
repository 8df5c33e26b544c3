// src/head: the response head, byte for byte as Node's lib/_http_outgoing.js
// `_storeHeader()` renders it (read it with
// `node -p "process.binding('natives')._http_outgoing"`), and the checks of
// lib/_http_common.js (`checkIsHttpToken`, `checkInvalidHeaderChar`).
#include "head.h"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace fast_response {
namespace {

const uint8_t* U(const char* s) { return reinterpret_cast<const uint8_t*>(s); }
const uint8_t* U(const std::string& s) { return U(s.data()); }

bool Token(const std::string& s) { return IsToken(U(s), s.size()); }
bool FieldValue(const std::string& s) { return IsFieldValue(U(s), s.size()); }
bool Equals(const std::string& s, const char* lower) {
  return EqualsLower(U(s), s.size(), lower);
}
bool HasWord(const std::string& s, const char* word) {
  return ContainsWord(U(s), s.size(), word);
}
uint32_t Match(const std::string& name, const std::string& value) {
  return MatchField(U(name), name.size(), U(value), value.size());
}

// ---------------------------------------------------------------------------
// IsToken: Node's tokenRegExp = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/

// The character class of tokenRegExp, spelled out from its source text.
bool NodeTokenChar(int c) {
  static const char kLiterals[] = "^_`-!#$%&'*+.|~";
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= '0' && c <= '9') return true;
  return c != 0 && std::strchr(kLiterals, c) != nullptr;
}

TEST(IsToken, EveryByteAsNodesTokenRegExp) {
  int accepted = 0;
  for (int c = 0; c < 256; c++) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(Token(one), NodeTokenChar(c)) << "byte 0x" << std::hex << c;
    // Also in the middle of a valid token: no byte is skipped over.
    const std::string mid = "X-" + one + "-Y";
    EXPECT_EQ(Token(mid), NodeTokenChar(c)) << "byte 0x" << std::hex << c;
    accepted += NodeTokenChar(c) ? 1 : 0;
  }
  EXPECT_EQ(accepted, 26 + 26 + 10 + 15);  // RFC 9110 tchar has 77 members
}

TEST(IsToken, EmptyIsNotAToken) {
  // validateHeaderName(): `!name` throws ERR_INVALID_HTTP_TOKEN.
  EXPECT_FALSE(Token(""));
}

TEST(IsToken, FieldNames) {
  EXPECT_TRUE(Token("Content-Type"));
  EXPECT_TRUE(Token("x-custom_header.v2~!#$%&'*+^`|"));
  EXPECT_FALSE(Token("Content Type"));
  EXPECT_FALSE(Token("Content-Type:"));
  EXPECT_FALSE(Token("X-Foo\r\nSet-Cookie"));
  EXPECT_FALSE(Token("X-\xe9t\xe9"));
  EXPECT_FALSE(Token(std::string("X-\0", 3)));
}

// ---------------------------------------------------------------------------
// IsFieldValue: Node's headerCharRegex = /[^\t\x20-\x7e\x80-\xff]/ finds the
// bytes it rejects.

bool NodeFieldValueChar(int c) {
  return c == '\t' || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff);
}

TEST(IsFieldValue, EveryByteAsNodesHeaderCharRegex) {
  int accepted = 0;
  for (int c = 0; c < 256; c++) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(FieldValue(one), NodeFieldValueChar(c))
        << "byte 0x" << std::hex << c;
    const std::string mid = "text/" + one + "; q=1";
    EXPECT_EQ(FieldValue(mid), NodeFieldValueChar(c))
        << "byte 0x" << std::hex << c;
    accepted += NodeFieldValueChar(c) ? 1 : 0;
  }
  EXPECT_EQ(accepted, 1 + 95 + 128);  // HTAB, SP..'~', obs-text
}

// IsFieldValue reads eight bytes at a time: every byte at every position of
// a 24-byte value (three words, and a tail when shortened), next to valid
// neighbours of every kind (SP, '~', obs-text 0xFF, HTAB).
TEST(IsFieldValue, EveryByteAtEveryPositionOfAWord) {
  for (const char neighbour : {' ', '~', '\xff', '\t', 'a'}) {
    for (size_t length : {7u, 8u, 9u, 15u, 16u, 24u}) {
      for (size_t at = 0; at < length; at++) {
        for (int c = 0; c < 256; c++) {
          std::string value(length, neighbour);
          value[at] = static_cast<char>(c);
          ASSERT_EQ(FieldValue(value), NodeFieldValueChar(c))
              << "byte 0x" << std::hex << c << std::dec << " at " << at
              << " of " << length << ", neighbours 0x" << std::hex
              << (static_cast<int>(neighbour) & 0xff);
        }
      }
    }
  }
}

TEST(IsFieldValue, Values) {
  // An empty value is valid: headerCharRegex finds nothing in ''.
  EXPECT_TRUE(FieldValue(""));
  EXPECT_TRUE(FieldValue(" leading and trailing space\t"));
  EXPECT_TRUE(FieldValue("attachment; filename=\"\xe9t\xe9.txt\""));
  // Response splitting: CR, LF and NUL anywhere are rejected.
  EXPECT_FALSE(FieldValue("a\r\nSet-Cookie: x=1"));
  EXPECT_FALSE(FieldValue("a\rb"));
  EXPECT_FALSE(FieldValue("a\nb"));
  EXPECT_FALSE(FieldValue(std::string("a\0b", 3)));
  EXPECT_FALSE(FieldValue("\x7f"));
}

// ---------------------------------------------------------------------------
// EqualsLower: the `field.toLowerCase()` comparisons of matchHeader().

TEST(EqualsLower, CaseInsensitiveAgainstLowerCaseLiteral) {
  EXPECT_TRUE(Equals("content-length", "content-length"));
  EXPECT_TRUE(Equals("Content-Length", "content-length"));
  EXPECT_TRUE(Equals("CONTENT-LENGTH", "content-length"));
  EXPECT_TRUE(Equals("", ""));
}

TEST(EqualsLower, LengthsMustMatch) {
  EXPECT_FALSE(Equals("content-lengt", "content-length"));
  EXPECT_FALSE(Equals("content-lengthx", "content-length"));
  EXPECT_FALSE(Equals("", "date"));
  EXPECT_FALSE(Equals("date", ""));
}

TEST(EqualsLower, FoldsOnlyAsciiLetters) {
  // '@' + 32 == '`', '[' + 32 == '{': only A-Z fold.
  EXPECT_FALSE(Equals("@", "`"));
  EXPECT_FALSE(Equals("[", "{"));
  EXPECT_FALSE(Equals("\xc0", "\xe0"));
  EXPECT_FALSE(Equals("dat\xc5", "date"));
}

// ---------------------------------------------------------------------------
// ContainsWord: RE_CONN_CLOSE = /(?:^|\W)close(?:$|\W)/i (and the same shape
// for "chunked"). \W is anything but [A-Za-z0-9_]. Expectations checked with
// `node -e "console.log(/(?:^|\W)close(?:$|\W)/i.test(s))"`.

TEST(ContainsWord, Close) {
  EXPECT_TRUE(HasWord("close", "close"));
  EXPECT_TRUE(HasWord("Close", "close"));
  EXPECT_TRUE(HasWord("CLOSE", "close"));
  EXPECT_TRUE(HasWord("keep-alive, close", "close"));
  EXPECT_TRUE(HasWord("keep-alive,close", "close"));
  EXPECT_TRUE(HasWord("-close", "close"));
  EXPECT_TRUE(HasWord("close,", "close"));
  EXPECT_TRUE(HasWord(" close ", "close"));
  EXPECT_TRUE(HasWord("\tclose", "close"));
  EXPECT_TRUE(HasWord("close close", "close"));
  EXPECT_TRUE(HasWord("xclose close", "close"));  // the second one
  // Bytes >= 0x80 are \W (é is not in [A-Za-z0-9_]).
  EXPECT_TRUE(HasWord("close\xe9", "close"));
  EXPECT_TRUE(
      HasWord("\xe9"
              "close",
              "close"));
}

TEST(ContainsWord, NotAWordOnItsOwn) {
  EXPECT_FALSE(HasWord("closed", "close"));
  EXPECT_FALSE(HasWord("xclose", "close"));
  EXPECT_FALSE(HasWord("close_", "close"));  // _ is \w
  EXPECT_FALSE(HasWord("_close", "close"));
  EXPECT_FALSE(HasWord("close1", "close"));
  EXPECT_FALSE(HasWord("1close", "close"));
  EXPECT_FALSE(HasWord("closeclose", "close"));
  EXPECT_FALSE(HasWord("c lose", "close"));
  EXPECT_FALSE(HasWord("clos", "close"));
  EXPECT_FALSE(HasWord("", "close"));
}

TEST(ContainsWord, Chunked) {
  // chunkExpression = /(?:^|\W)chunked(?:$|\W)/i
  EXPECT_TRUE(HasWord("chunked", "chunked"));
  EXPECT_TRUE(HasWord("gzip, Chunked", "chunked"));
  EXPECT_FALSE(HasWord("gzip", "chunked"));
  EXPECT_FALSE(HasWord("chunkedx", "chunked"));
}

// ---------------------------------------------------------------------------
// MatchField: which fields matchHeader() (lengths 4..17) and processHeader()
// (content-disposition) look at.

TEST(MatchField, FieldsMatchHeaderRecords) {
  EXPECT_EQ(Match("Date", "x"), kFieldDate);
  EXPECT_EQ(Match("DATE", "x"), kFieldDate);
  EXPECT_EQ(Match("Expect", "100-continue"), kFieldExpect);
  EXPECT_EQ(Match("trailer", "X-Checksum"), kFieldTrailer);
  EXPECT_EQ(Match("Keep-Alive", "timeout=10"), kFieldKeepAlive);
  EXPECT_EQ(Match("content-length", "5"), kFieldContentLength);
  EXPECT_EQ(Match("Content-Length", "not a number"), kFieldContentLength);
}

TEST(MatchField, ConnectionByItsValue) {
  EXPECT_EQ(Match("Connection", "close"),
            kFieldConnection | kFieldConnectionClose);
  EXPECT_EQ(Match("connection", "Keep-Alive, Close"),
            kFieldConnection | kFieldConnectionClose);
  EXPECT_EQ(Match("Connection", "keep-alive"),
            kFieldConnection | kFieldConnectionNotClose);
  EXPECT_EQ(Match("Connection", "Upgrade"),
            kFieldConnection | kFieldConnectionNotClose);
  EXPECT_EQ(Match("Connection", "closed"),
            kFieldConnection | kFieldConnectionNotClose);
  EXPECT_EQ(Match("Connection", ""),
            kFieldConnection | kFieldConnectionNotClose);
}

TEST(MatchField, TransferEncodingByItsValue) {
  EXPECT_EQ(Match("Transfer-Encoding", "chunked"),
            kFieldTransferEncoding | kFieldChunked);
  EXPECT_EQ(Match("transfer-encoding", "gzip, CHUNKED"),
            kFieldTransferEncoding | kFieldChunked);
  EXPECT_EQ(Match("Transfer-Encoding", "gzip"), kFieldTransferEncoding);
}

TEST(MatchField, ContentDispositionOnlyWhenNotAscii) {
  EXPECT_EQ(Match("Content-Disposition", "attachment; filename=\"a.txt\""), 0u);
  EXPECT_EQ(Match("content-disposition", "attachment; filename=\"\xe9.txt\""),
            kFieldContentDispositionNonAscii);
}

TEST(MatchField, OtherFieldsRecordNothing) {
  EXPECT_EQ(Match("Content-Type", "text/plain"), 0u);
  EXPECT_EQ(Match("X-Date", "x"), 0u);
  EXPECT_EQ(Match("Dates", "x"), 0u);
  EXPECT_EQ(Match("Dat", "x"), 0u);
  EXPECT_EQ(Match("Connections", "close"), 0u);
  EXPECT_EQ(Match("Connectiom", "close"), 0u);  // right length, other name
  EXPECT_EQ(Match("Content-Lengths", "5"), 0u);
  EXPECT_EQ(Match("Transfer-Encodings", "chunked"), 0u);
  EXPECT_EQ(Match("", ""), 0u);
}

// ---------------------------------------------------------------------------
// HeadBuffer

std::string StatusLine(int status_code, const std::string& reason) {
  HeadBuffer head;
  head.AppendStatusLine(status_code, U(reason), reason.size());
  return std::string(head.bytes());
}

TEST(HeadBuffer, AppendStatusLine) {
  // writeHead(): `HTTP/1.1 ${statusCode} ${this.statusMessage}\r\n`
  EXPECT_EQ(StatusLine(200, "OK"), "HTTP/1.1 200 OK\r\n");
  EXPECT_EQ(StatusLine(100, "Continue"), "HTTP/1.1 100 Continue\r\n");
  EXPECT_EQ(StatusLine(404, "Not Found"), "HTTP/1.1 404 Not Found\r\n");
  EXPECT_EQ(StatusLine(999, ""), "HTTP/1.1 999 \r\n");  // SP stays
  // The reason is copied as it is (latin1 bytes, HTAB).
  EXPECT_EQ(StatusLine(599, "Tr\xe8s\tbien"), "HTTP/1.1 599 Tr\xe8s\tbien\r\n");
}

TEST(HeadBuffer, AppendStatusLineAppends) {
  HeadBuffer head;
  head.AppendRaw("x");
  head.AppendStatusLine(204, U("No Content"), 10);
  EXPECT_EQ(head.bytes(), "xHTTP/1.1 204 No Content\r\n");
}

TEST(HeadBuffer, AppendField) {
  HeadBuffer head;
  head.AppendField(U("Content-Type"), 12, U("text/plain"), 10);
  head.AppendField(U("X-Empty"), 7, U(""), 0);
  EXPECT_EQ(head.bytes(), "Content-Type: text/plain\r\nX-Empty: \r\n");
  EXPECT_EQ(head.size(), head.bytes().size());
  head.Clear();
  EXPECT_EQ(head.size(), 0u);
}

TEST(HeadBuffer, GrowsKeepingItsBytesAndTruncates) {
  // Pieces of every length up to 300 bytes: the buffer grows several times
  // (from 256 bytes, doubling) and must keep what it held, in order.
  HeadBuffer head;
  std::string expected;
  for (int n = 0; n <= 300; n++) {
    const std::string piece(static_cast<size_t>(n),
                            static_cast<char>('a' + n % 26));
    head.AppendRaw(U(piece), piece.size());
    expected += piece;
  }
  ASSERT_EQ(head.size(), expected.size());
  EXPECT_EQ(head.bytes(), expected);
  char* at = head.Extend(3);
  std::memcpy(at, "xyz", 3);
  EXPECT_EQ(head.bytes(), expected + "xyz");
  head.Truncate(5);
  EXPECT_EQ(head.bytes(), expected.substr(0, 5));
  head.Truncate(10);  // never grows
  EXPECT_EQ(head.size(), 5u);
  head.Clear();
  head.AppendRaw("again");
  EXPECT_EQ(head.bytes(), "again");
}

std::string Decimal(uint64_t v) {
  HeadBuffer head;
  head.AppendRaw("Content-Length: ");
  head.AppendDecimal(v);
  return std::string(head.bytes().substr(16));
}

TEST(HeadBuffer, AppendDecimal) {
  EXPECT_EQ(Decimal(0), "0");
  EXPECT_EQ(Decimal(9), "9");
  EXPECT_EQ(Decimal(10), "10");
  EXPECT_EQ(Decimal(1234567890), "1234567890");
  EXPECT_EQ(Decimal(9007199254740991ull), "9007199254740991");
  EXPECT_EQ(Decimal(UINT64_MAX), "18446744073709551615");
}

// ---------------------------------------------------------------------------
// DateCache: Node's utcDate() is `new Date().toUTCString()`; expectations
// from `node -p "new Date(s * 1000).toUTCString()"`.

std::string Date(int64_t unix_seconds) {
  char out[DateCache::kLength + 1];
  std::memset(out, 'X', sizeof(out));
  DateCache::Format(unix_seconds, out);
  EXPECT_EQ(out[DateCache::kLength], '\0');
  return std::string(out);
}

TEST(DateCache, FormatKnownDates) {
  EXPECT_EQ(Date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(Date(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");  // RFC 9110
  EXPECT_EQ(Date(951782400), "Tue, 29 Feb 2000 00:00:00 GMT");  // leap day
  EXPECT_EQ(Date(951868799), "Tue, 29 Feb 2000 23:59:59 GMT");
  EXPECT_EQ(Date(1709211909), "Thu, 29 Feb 2024 13:05:09 GMT");
  EXPECT_EQ(Date(2147483647), "Tue, 19 Jan 2038 03:14:07 GMT");  // 2^31 - 1
  EXPECT_EQ(Date(2147483648), "Tue, 19 Jan 2038 03:14:08 GMT");  // 2^31
  EXPECT_EQ(Date(4102444800), "Fri, 01 Jan 2100 00:00:00 GMT");  // no leap
  EXPECT_EQ(Date(253402300799), "Fri, 31 Dec 9999 23:59:59 GMT");
  EXPECT_EQ(Date(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
}

// The clock DateCache::Now() reads. (time(2) may lag it by a few
// milliseconds: it reads the coarse clock.)
int64_t RealtimeSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec;
}

TEST(DateCache, NowIsTheCurrentSecond) {
  DateCache cache;
  const int64_t before = RealtimeSeconds();
  const std::string now(cache.Now());
  const int64_t after = RealtimeSeconds();
  EXPECT_EQ(now.size(), DateCache::kLength);
  EXPECT_TRUE(now == Date(before) || now == Date(after)) << now;
  // Formatted at most once a second: the same text, in the same place.
  EXPECT_EQ(cache.Now(), cache.Now());
}

// ---------------------------------------------------------------------------
// FinishHead: what _storeHeader() appends after the caller's fields, and the
// state it leaves (`_last`, `chunkedEncoding`, `shouldKeepAlive`, and whether
// it throws ERR_HTTP_TRAILER_INVALID).

struct Field {
  std::string name;
  std::string value;
};

struct FinishCase {
  const char* name;
  std::function<void(MessageState*)> state;  // changes from BaseState()
  std::vector<Field> fields;                 // the caller's fields
  std::string appended;                      // what FinishHead adds
  std::string result;                        // Describe(HeadResult)
};

// An HTTP/1.1 keep-alive response to GET with a 5-byte body, no Date (a
// test of its own below), no keepAliveTimeout.
MessageState BaseState() {
  MessageState s;
  s.send_date = false;
  s.should_keep_alive = true;
  s.use_chunked_encoding_by_default = true;
  s.has_body = true;
  s.content_length = 5;
  return s;
}

std::string Describe(const HeadResult& r) {
  return std::string("last=") + (r.last ? "1" : "0") +
         " chunked=" + (r.chunked_encoding ? "1" : "0") +
         " keep_alive=" + (r.should_keep_alive ? "1" : "0") +
         " trailer_invalid=" + (r.trailer_invalid ? "1" : "0");
}

const char kStatusLine[] = "HTTP/1.1 200 OK\r\n";

// Renders the status line, `fields` and FinishHead's part; returns the
// fields' text in `given`.
HeadResult Render(const MessageState& state, const std::vector<Field>& fields,
                  std::string* head, std::string* given) {
  HeadBuffer buffer;
  buffer.AppendStatusLine(200, U("OK"), 2);
  uint32_t flags = 0;
  given->clear();
  for (const Field& f : fields) {
    buffer.AppendField(U(f.name), f.name.size(), U(f.value), f.value.size());
    *given += f.name + ": " + f.value + "\r\n";
    flags |= Match(f.name, f.value);
  }
  DateCache date;
  const HeadResult r = FinishHead(&buffer, flags, state, &date);
  head->assign(buffer.bytes());
  return r;
}

// gtest prints a parameter that fails by its name, not its bytes.
void PrintTo(const FinishCase& c, std::ostream* os) { *os << c.name; }

class FinishHeadTest : public testing::TestWithParam<FinishCase> {};

TEST_P(FinishHeadTest, AsStoreHeader) {
  const FinishCase& c = GetParam();
  MessageState state = BaseState();
  if (c.state) c.state(&state);
  std::string head, given;
  const HeadResult r = Render(state, c.fields, &head, &given);
  EXPECT_EQ(head, kStatusLine + given + c.appended);
  EXPECT_EQ(Describe(r), c.result);
}

const char kKeepAlive[] = "last=0 chunked=0 keep_alive=1 trailer_invalid=0";

const FinishCase kFinishCases[] = {
    // --- keep-alive logic: `else if (!state.connection)` ----------------
    {"Http11KeepAlive",
     // shouldSendKeepAlive (shouldKeepAlive && useChunkedEncodingByDefault)
     // -> 'Connection: keep-alive'; then `typeof this._contentLength ===
     // 'number'` -> 'Content-Length: ' + _contentLength.
     nullptr,
     {},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"NotKeepAlive",
     // !shouldSendKeepAlive -> `this._last = true; 'Connection: close'`.
     [](MessageState* s) { s->should_keep_alive = false; },
     {},
     "Connection: close\r\nContent-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=0 trailer_invalid=0"},
    {"LastAlreadySet",
     // Nothing in _storeHeader() clears `_last`.
     [](MessageState* s) { s->last = true; },
     {},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"MaxRequestsReached",
     // `shouldSendKeepAlive && this.maxRequestsOnConnectionReached` ->
     // 'Connection: close' only: `_last` and shouldKeepAlive stay.
     [](MessageState* s) { s->max_requests_on_connection_reached = true; },
     {},
     "Connection: close\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"MaxRequestsReachedNoKeepAliveField",
     // The same branch: no Keep-Alive field even with a keepAliveTimeout.
     [](MessageState* s) {
       s->max_requests_on_connection_reached = true;
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
     },
     {},
     "Connection: close\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"MaxRequestsReachedNotKeepAlive",
     // !shouldSendKeepAlive wins: `_last = true`, 'Connection: close'.
     [](MessageState* s) {
       s->max_requests_on_connection_reached = true;
       s->should_keep_alive = false;
     },
     {},
     "Connection: close\r\nContent-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=0 trailer_invalid=0"},
    {"KeepAliveTimeout",
     // `this._keepAliveTimeout && this._defaultKeepAlive` ->
     // `Keep-Alive: timeout=${MathFloor(_keepAliveTimeout / 1000)}`.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
     },
     {},
     "Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: "
     "5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveTimeoutWithMaxRequests",
     // `~~this._maxRequestsPerSocket > 0` -> `, max=${...}`.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
       s->max_requests = 100;
     },
     {},
     "Connection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\n"
     "Content-Length: 5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveTimeoutBelowOneSecond",
     // keepAliveTimeout = 999: MathFloor(0.999) = 0.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 0;
     },
     {},
     "Connection: keep-alive\r\nKeep-Alive: timeout=0\r\nContent-Length: "
     "5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveTimeoutNegative",
     // keepAliveTimeout = -1500 is truthy: MathFloor(-1.5) = -2.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = -2;
     },
     {},
     "Connection: keep-alive\r\nKeep-Alive: timeout=-2\r\nContent-Length: "
     "5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveTimeoutInt64Min",
     // Not reachable from lib/ (it passes safe integers only); printed as
     // std::to_string() would, without overflow.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = INT64_MIN;
     },
     {},
     "Connection: keep-alive\r\nKeep-Alive: timeout=-9223372036854775808\r\n"
     "Content-Length: 5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveTimeoutNotSet",
     // `this._keepAliveTimeout` falsy (0): no Keep-Alive field.
     [](MessageState* s) {
       s->keep_alive_timeout_set = false;
       s->keep_alive_timeout_s = 5;
       s->max_requests = 100;
     },
     {},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveFieldGiven",
     // matchHeader('keep-alive') sets `_defaultKeepAlive = false`: Node
     // writes no Keep-Alive field of its own, still 'Connection: keep-alive'.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
     },
     {{"Keep-Alive", "timeout=10"}},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"KeepAliveTimeoutNotKeepAlive",
     // !shouldSendKeepAlive: 'Connection: close', no Keep-Alive.
     [](MessageState* s) {
       s->should_keep_alive = false;
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
     },
     {},
     "Connection: close\r\nContent-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=0 trailer_invalid=0"},

    // --- HTTP/1.0: useChunkedEncodingByDefault = false -------------------
    {"Http10KeepAliveWithoutContentLengthField",
     // shouldSendKeepAlive needs `state.contLen ||
     // useChunkedEncodingByDefault`:
     // false -> `_last = true`, 'Connection: close'; then
     // `!this.useChunkedEncodingByDefault` -> `_last = true`, no
     // Content-Length (_contentLength is ignored).
     [](MessageState* s) { s->use_chunked_encoding_by_default = false; },
     {},
     "Connection: close\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"Http10NotKeepAlive",
     [](MessageState* s) {
       s->use_chunked_encoding_by_default = false;
       s->should_keep_alive = false;
     },
     {},
     "Connection: close\r\n\r\n",
     "last=1 chunked=0 keep_alive=0 trailer_invalid=0"},
    {"Http10KeepAliveWithContentLengthField",
     // `state.contLen` -> shouldSendKeepAlive -> 'Connection: keep-alive'
     // (+ Keep-Alive); the Content-Length branch is skipped.
     [](MessageState* s) {
       s->use_chunked_encoding_by_default = false;
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
     },
     {{"Content-Length", "5"}},
     "Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n",
     kKeepAlive},

    // --- no body (HEAD, 204, 304): `!this._hasBody` -----------------------
    {"NoBody",
     // `chunkedEncoding = false`; no Content-Length although _contentLength
     // is a number.
     [](MessageState* s) { s->has_body = false; },
     {},
     "Connection: keep-alive\r\n\r\n",
     kKeepAlive},
    {"NoBodyNoContentLength",
     [](MessageState* s) {
       s->has_body = false;
       s->content_length = -1;
     },
     {},
     "Connection: keep-alive\r\n\r\n",
     kKeepAlive},
    {"NoBodyHttp10",
     // Keep-alive logic as Http10KeepAliveWithoutContentLengthField; the
     // `!this._hasBody` branch comes first and does not set `_last`.
     [](MessageState* s) {
       s->has_body = false;
       s->use_chunked_encoding_by_default = false;
     },
     {},
     "Connection: close\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"NoBodyTransferEncodingChunkedField",
     // matchHeader('transfer-encoding') sets chunkedEncoding; `state.te`
     // skips the whole Content-Length/Transfer-Encoding block.
     [](MessageState* s) { s->has_body = false; },
     {{"Transfer-Encoding", "chunked"}},
     "Connection: keep-alive\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},

    // --- `if (this._removedConnection)` -----------------------------------
    {"RemovedConnectionKeepAlive",
     // `this._last = !this.shouldKeepAlive`; no Connection field.
     [](MessageState* s) { s->removed_connection = true; },
     {},
     "Content-Length: 5\r\n\r\n",
     kKeepAlive},
    {"RemovedConnectionNotKeepAlive",
     [](MessageState* s) {
       s->removed_connection = true;
       s->should_keep_alive = false;
     },
     {},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=0 trailer_invalid=0"},
    {"RemovedConnectionThenConnectionField",
     // matchHeader('connection') sets `_removedConnection = false` and
     // `state.connection`: neither keep-alive branch runs; the value decides.
     [](MessageState* s) { s->removed_connection = true; },
     {{"Connection", "close"}},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},

    // --- a Connection field: matchHeader('connection') -------------------
    {"ConnectionCloseField",
     // RE_CONN_CLOSE -> `_last = true`; `state.connection`: nothing added,
     // no Keep-Alive even with a keepAliveTimeout.
     [](MessageState* s) {
       s->keep_alive_timeout_set = true;
       s->keep_alive_timeout_s = 5;
     },
     {{"Connection", "close"}},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"ConnectionKeepAliveField",
     // Not RE_CONN_CLOSE -> `shouldKeepAlive = true`.
     [](MessageState* s) { s->should_keep_alive = false; },
     {{"Connection", "keep-alive"}},
     "Content-Length: 5\r\n\r\n",
     kKeepAlive},
    {"ConnectionUpgradeField",
     [](MessageState* s) { s->should_keep_alive = false; },
     {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}},
     "Content-Length: 5\r\n\r\n",
     kKeepAlive},
    {"ConnectionKeepAliveFieldKeepsLast",
     // `shouldKeepAlive = true` does not clear `_last`.
     [](MessageState* s) { s->last = true; },
     {{"Connection", "keep-alive"}},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"ConnectionKeepAliveCloseField",
     [](MessageState*) {},
     {{"Connection", "keep-alive, close"}},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},

    {"ConnectionKeepAliveThenCloseFields",
     // matchHeader() runs per field: the first sets shouldKeepAlive, the
     // second `_last`; both stay.
     [](MessageState* s) { s->should_keep_alive = false; },
     {{"Connection", "keep-alive"}, {"Connection", "close"}},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"ConnectionCloseThenKeepAliveFields",
     [](MessageState* s) { s->should_keep_alive = false; },
     {{"Connection", "close"}, {"Connection", "keep-alive"}},
     "Content-Length: 5\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},

    // --- `if (!state.contLen && !state.te)` -------------------------------
    {"ContentLengthFieldGiven",
     // `state.contLen`: _contentLength is not written.
     nullptr,
     {{"Content-Length", "3"}},
     "Connection: keep-alive\r\n\r\n",
     kKeepAlive},
    {"ContentLengthZero",
     // `typeof 0 === 'number'`.
     [](MessageState* s) { s->content_length = 0; },
     {},
     "Connection: keep-alive\r\nContent-Length: 0\r\n\r\n",
     kKeepAlive},
    {"ContentLengthLarge",
     [](MessageState* s) { s->content_length = 9007199254740991; },
     {},
     "Connection: keep-alive\r\nContent-Length: 9007199254740991\r\n\r\n",
     kKeepAlive},
    {"NoContentLengthIsChunked",
     // _contentLength not a number (-1 here) -> `!this._removedTE` ->
     // 'Transfer-Encoding: chunked', `chunkedEncoding = true`.
     [](MessageState* s) { s->content_length = -1; },
     {},
     "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},
    {"TransferEncodingChunkedField",
     // `state.te`: the block is skipped; matchHeader set chunkedEncoding.
     nullptr,
     {{"Transfer-Encoding", "chunked"}},
     "Connection: keep-alive\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},
    {"TransferEncodingGzipField",
     nullptr,
     {{"Transfer-Encoding", "gzip"}},
     "Connection: keep-alive\r\n\r\n",
     kKeepAlive},
    {"RemovedContentLength",
     // `!this._removedContLen` fails -> 'Transfer-Encoding: chunked'.
     [](MessageState* s) { s->removed_content_length = true; },
     {},
     "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},
    {"RemovedContentLengthThenContentLengthField",
     // matchHeader('content-length') clears `_removedContLen`; `state.contLen`
     // skips the block.
     [](MessageState* s) { s->removed_content_length = true; },
     {{"Content-Length", "5"}},
     "Connection: keep-alive\r\n\r\n",
     kKeepAlive},
    {"RemovedTransferEncodingWithLength",
     // The Content-Length branch comes first.
     [](MessageState* s) { s->removed_transfer_encoding = true; },
     {},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"RemovedTransferEncodingWithoutLength",
     // Last `else`: neither framing field may be written -> `_last = true`
     // (the body ends when the connection does).
     [](MessageState* s) {
       s->removed_transfer_encoding = true;
       s->content_length = -1;
     },
     {},
     "Connection: keep-alive\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},
    {"RemovedBoth",
     [](MessageState* s) {
       s->removed_content_length = true;
       s->removed_transfer_encoding = true;
     },
     {},
     "Connection: keep-alive\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=0"},

    // --- `if (this.chunkedEncoding !== true && state.trailer)` -------------
    {"TrailerChunked",
     // No _contentLength -> 'Transfer-Encoding: chunked': trailers allowed.
     [](MessageState* s) { s->content_length = -1; },
     {{"Trailer", "X-Checksum"}},
     "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},
    {"TrailerWithLengthIsChunked",
     // `!state.trailer` fails: _contentLength is ignored, chunked instead.
     nullptr,
     {{"Trailer", "X-Checksum"}},
     "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},
    {"TrailerTransferEncodingChunkedField",
     nullptr,
     {{"Trailer", "X-Checksum"}, {"Transfer-Encoding", "chunked"}},
     "Connection: keep-alive\r\n\r\n",
     "last=0 chunked=1 keep_alive=1 trailer_invalid=0"},
    {"TrailerTransferEncodingGzipField",
     nullptr,
     {{"Trailer", "X-Checksum"}, {"Transfer-Encoding", "gzip"}},
     "Connection: keep-alive\r\n\r\n",
     "last=0 chunked=0 keep_alive=1 trailer_invalid=1"},
    {"TrailerContentLengthField",
     nullptr,
     {{"Trailer", "X-Checksum"}, {"Content-Length", "5"}},
     "Connection: keep-alive\r\n\r\n",
     "last=0 chunked=0 keep_alive=1 trailer_invalid=1"},
    {"TrailerHttp10",
     [](MessageState* s) { s->use_chunked_encoding_by_default = false; },
     {{"Trailer", "X-Checksum"}},
     "Connection: close\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=1"},
    {"TrailerNoBody",
     [](MessageState* s) { s->has_body = false; },
     {{"Trailer", "X-Checksum"}},
     "Connection: keep-alive\r\n\r\n",
     "last=0 chunked=0 keep_alive=1 trailer_invalid=1"},
    {"TrailerRemovedBoth",
     [](MessageState* s) {
       s->removed_content_length = true;
       s->removed_transfer_encoding = true;
     },
     {{"Trailer", "X-Checksum"}},
     "Connection: keep-alive\r\n\r\n",
     "last=1 chunked=0 keep_alive=1 trailer_invalid=1"},

    // --- Date: `if (this.sendDate && !state.date)` ------------------------
    {"DateFieldGiven",
     [](MessageState* s) { s->send_date = true; },
     {{"Date", "Sun, 06 Nov 1994 08:49:37 GMT"}},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
    {"SendDateOff",
     // (BaseState() already has send_date off; here with fields around.)
     [](MessageState* s) { s->send_date = false; },
     {{"Content-Type", "text/plain"}, {"X-Date", "not the Date field"}},
     "Connection: keep-alive\r\nContent-Length: 5\r\n\r\n",
     kKeepAlive},
};

INSTANTIATE_TEST_SUITE_P(StoreHeader, FinishHeadTest,
                         testing::ValuesIn(kFinishCases),
                         [](const testing::TestParamInfo<FinishCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(FinishHead, SendDateAddsDateFirst) {
  // 'Date: ' + utcDate() + '\r\n' before the keep-alive fields.
  MessageState state = BaseState();
  state.send_date = true;
  std::string head, given;
  const int64_t before = RealtimeSeconds();
  const HeadResult r =
      Render(state, {{"Content-Type", "text/plain"}}, &head, &given);
  const int64_t after = RealtimeSeconds();
  const std::string prefix =
      std::string(kStatusLine) + "Content-Type: text/plain\r\nDate: ";
  const std::string suffix =
      "\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\n";
  ASSERT_EQ(head.size(), prefix.size() + DateCache::kLength + suffix.size())
      << head;
  EXPECT_EQ(head.substr(0, prefix.size()), prefix);
  EXPECT_EQ(head.substr(prefix.size() + DateCache::kLength), suffix);
  const std::string date = head.substr(prefix.size(), DateCache::kLength);
  EXPECT_TRUE(date == Date(before) || date == Date(after)) << date;
  EXPECT_EQ(Describe(r), kKeepAlive);
}

TEST(FinishHead, NodeDefaultServerResponse) {
  // res.setHeader('Content-Type', 'text/plain'); res.end('hello') on a
  // default http.Server (keepAliveTimeout 5000), Date aside: _header as
  // Node 18-26 render it.
  MessageState state = BaseState();
  state.keep_alive_timeout_set = true;
  state.keep_alive_timeout_s = 5;
  std::string head, given;
  Render(state, {{"Content-Type", "text/plain"}}, &head, &given);
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain\r\n"
            "Connection: keep-alive\r\n"
            "Keep-Alive: timeout=5\r\n"
            "Content-Length: 5\r\n"
            "\r\n");
}

TEST(FinishHead, AppendsToWhatIsThere) {
  // The head is built in one buffer, reused from response to response.
  HeadBuffer buffer;
  DateCache date;
  MessageState state = BaseState();
  for (int i = 0; i < 3; i++) {
    buffer.Clear();
    buffer.AppendStatusLine(204, U("No Content"), 10);
    state.has_body = false;
    FinishHead(&buffer, 0, state, &date);
    EXPECT_EQ(buffer.bytes(),
              "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
  }
}

// ---------------------------------------------------------------------------
// RenderStatusAndFields: the status line and the caller's fields from one
// NUL-separated text, "reason\0name\0value\0...", as src/addon.cc reads it
// from lib/headers.js.

// The text lib/headers.js joins: the reason, then each name and value, every
// one followed by NUL.
std::string Joined(const std::string& reason,
                   const std::vector<Field>& fields) {
  std::string text = reason + '\0';
  for (const Field& f : fields) {
    text += f.name + '\0';
    text += f.value + '\0';
  }
  return text;
}

struct Rendered {
  FieldsResult result;
  std::string bytes;
};

// Renders `text` into a buffer that already holds `before`.
Rendered RenderText(int status_code, const std::string& text, uint32_t count,
                    bool validate = true, const std::string& before = "") {
  HeadBuffer head;
  head.AppendRaw(before);
  Rendered out;
  out.result = RenderStatusAndFields(&head, status_code, U(text), text.size(),
                                     count, validate);
  out.bytes.assign(head.bytes());
  return out;
}

Rendered RenderFields(int status_code, const std::string& reason,
                      const std::vector<Field>& fields, bool validate = true) {
  return RenderText(status_code, Joined(reason, fields),
                    static_cast<uint32_t>(fields.size()), validate);
}

TEST(RenderStatusAndFields, StatusLineAndFieldsByteForByte) {
  const Rendered r = RenderFields(200, "OK",
                                  {{"Content-Type", "text/plain"},
                                   {"X-Empty", ""},
                                   {"Set-Cookie", "a=1"},
                                   {"Set-Cookie", "b=2"},
                                   {"X-Latin1", "caf\xe9\t "}});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain\r\n"
            "X-Empty: \r\n"
            "Set-Cookie: a=1\r\n"
            "Set-Cookie: b=2\r\n"
            "X-Latin1: caf\xe9\t \r\n");
  EXPECT_EQ(r.result.fields, 0u);
  EXPECT_EQ(r.result.content_length, -1);
}

TEST(RenderStatusAndFields, StatusLineAlone) {
  Rendered r = RenderText(404, std::string("Not Found\0", 10), 0);
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes, "HTTP/1.1 404 Not Found\r\n");
  // An empty reason phrase: the SP stays (writeHead()'s template string).
  r = RenderText(299, std::string("\0", 1), 0);
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes, "HTTP/1.1 299 \r\n");
  r = RenderFields(100, "Continue", {});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes, "HTTP/1.1 100 Continue\r\n");
  r = RenderFields(999, "", {{"A", "b"}});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes, "HTTP/1.1 999 \r\nA: b\r\n");
}

TEST(RenderStatusAndFields, StatusOutside100To999IsInvalid) {
  // writeHead(): ERR_HTTP_INVALID_STATUS_CODE for `statusCode < 100 ||
  // statusCode > 999`.
  for (const int status :
       {99, 1000, 0, -1, -200, 10000, INT32_MIN, INT32_MAX}) {
    EXPECT_FALSE(RenderFields(status, "OK", {{"A", "b"}}).result.valid)
        << status;
  }
  EXPECT_TRUE(RenderFields(100, "OK", {{"A", "b"}}).result.valid);
  EXPECT_TRUE(RenderFields(999, "OK", {{"A", "b"}}).result.valid);
}

TEST(RenderStatusAndFields, NulInsideAPartIsInvalid) {
  // NUL is valid in no reason, field-name or field-value: a NUL of the
  // caller's makes one part more than the count says.
  const std::string nul(1, '\0');
  const std::vector<Field> fields = {{"Content-Type", "text/plain"},
                                     {"X-Id", "1"}};
  for (const bool validate : {true, false}) {
    SCOPED_TRACE(validate ? "validate" : "no validation");
    // In the reason phrase.
    EXPECT_FALSE(
        RenderFields(200, "O" + nul + "K", fields, validate).result.valid);
    EXPECT_FALSE(RenderFields(200, nul, {}, validate).result.valid);
    EXPECT_FALSE(RenderFields(200, "OK" + nul, {}, validate).result.valid);
    // In a field-name.
    EXPECT_FALSE(
        RenderFields(200, "OK",
                     {{"Content-Type", "text/plain"}, {"X-" + nul + "Id", "1"}},
                     validate)
            .result.valid);
    EXPECT_FALSE(RenderFields(200, "OK", {{nul, "1"}}, validate).result.valid);
    // In a field-value, anywhere.
    for (const std::string& value :
         {nul, nul + "a", "a" + nul, "a" + nul + "b", "a" + nul + nul + "b"}) {
      EXPECT_FALSE(
          RenderFields(200, "OK",
                       {{"Content-Type", "text/plain"}, {"X-Id", value}},
                       validate)
              .result.valid);
      EXPECT_FALSE(
          RenderFields(200, "OK", {{"X-Id", value}, {"A", "b"}}, validate)
              .result.valid);
    }
    // The same parts as two fields, with a count of one: a part over.
    EXPECT_FALSE(
        RenderText(200, Joined("OK", {{"A", "b"}, {"C", "d"}}), 1, validate)
            .result.valid);
  }
}

TEST(RenderStatusAndFields, TooFewOrTooManyParts) {
  const std::string two = Joined("OK", {{"A", "1"}, {"B", "2"}});
  EXPECT_TRUE(RenderText(200, two, 2).result.valid);
  // Too few: the count says more fields than the text holds.
  EXPECT_FALSE(RenderText(200, two, 3).result.valid);
  EXPECT_FALSE(RenderText(200, two, UINT32_MAX).result.valid);
  // Too many: parts left after `count` fields.
  EXPECT_FALSE(RenderText(200, two, 1).result.valid);
  EXPECT_FALSE(RenderText(200, two, 0).result.valid);
  // A name without its value.
  EXPECT_FALSE(RenderText(200, std::string("OK\0A\0", 5), 1).result.valid);
  // The last part without its NUL.
  EXPECT_FALSE(RenderText(200,
                          std::string("OK\0A\0"
                                      "1",
                                      6),
                          1)
                   .result.valid);
  EXPECT_FALSE(RenderText(200, "OK", 0).result.valid);
  // Nothing at all: not even the reason phrase's NUL.
  EXPECT_FALSE(RenderText(200, "", 0).result.valid);
  // Bytes after the last NUL.
  EXPECT_FALSE(RenderText(200,
                          std::string("OK\0A\0"
                                      "1\0x",
                                      8),
                          1)
                   .result.valid);
}

TEST(RenderStatusAndFields, ValidationOfFields) {
  // writeHead() -> setHeader()/validateHeaderName(), validateHeaderValue().
  const std::vector<std::vector<Field>> invalid = {
      {{"", "empty name"}},
      {{"Bad Name", "x"}},
      {{"Bad:Name", "x"}},
      {{"X-\xe9", "x"}},
      {{"X-Split", "a\r\nSet-Cookie: x=1"}},
      {{"X-Cr", "a\rb"}},
      {{"X-Lf", "a\nb"}},
      {{"X-Del", "\x7f"}},
      {{"X-Ok", "fine"}, {"X-Bell", "\x07"}},
  };
  for (const std::vector<Field>& fields : invalid) {
    SCOPED_TRACE(fields.back().name);
    EXPECT_FALSE(RenderFields(200, "OK", fields, true).result.valid);
    // validate=false (writeHead() after lib/ checked them, template()):
    // rendered as they are.
    const Rendered r = RenderFields(200, "OK", fields, false);
    ASSERT_TRUE(r.result.valid);
    std::string expected = "HTTP/1.1 200 OK\r\n";
    for (const Field& f : fields) expected += f.name + ": " + f.value + "\r\n";
    EXPECT_EQ(r.bytes, expected);
  }
}

TEST(RenderStatusAndFields, ReasonPhraseIsAlwaysChecked) {
  // writeHead() checks statusMessage (ERR_INVALID_CHAR) whatever the fields.
  for (const bool validate : {true, false}) {
    for (const std::string reason :
         {"O\r\nK", "OK\r", "\nOK", "O\x7fK", "O\x01K"}) {
      EXPECT_FALSE(
          RenderFields(200, reason, {{"A", "b"}}, validate).result.valid)
          << validate;
    }
    for (const std::string reason : {"", "OK", "Tr\xe8s\tbien", " ~ "}) {
      EXPECT_TRUE(
          RenderFields(200, reason, {{"A", "b"}}, validate).result.valid)
          << validate;
    }
  }
}

TEST(RenderStatusAndFields, FieldFlagsAreTheUnion) {
  const Rendered r =
      RenderFields(200, "OK",
                   {{"Connection", "keep-alive"},
                    {"connection", "close"},
                    {"Transfer-Encoding", "gzip, chunked"},
                    {"Content-Length", "5"},
                    {"DATE", "Sun, 06 Nov 1994 08:49:37 GMT"},
                    {"Expect", "100-continue"},
                    {"Trailer", "X-Checksum"},
                    {"Keep-Alive", "timeout=5"},
                    {"Content-Disposition", "attachment; filename=\xe9"},
                    {"Content-Type", "text/plain"}});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.result.fields,
            static_cast<uint32_t>(kFieldConnection | kFieldConnectionClose |
                                  kFieldConnectionNotClose |
                                  kFieldContentLength | kFieldTransferEncoding |
                                  kFieldChunked | kFieldDate | kFieldExpect |
                                  kFieldTrailer | kFieldKeepAlive |
                                  kFieldContentDispositionNonAscii));
  // Each field alone: the union of one is MatchField().
  for (const Field& f : std::vector<Field>{{"Connection", "close"},
                                           {"Keep-Alive", "timeout=5"},
                                           {"Transfer-Encoding", "gzip"},
                                           {"X-Other", "close"}}) {
    const Rendered one = RenderFields(200, "OK", {f});
    ASSERT_TRUE(one.result.valid);
    EXPECT_EQ(one.result.fields, Match(f.name, f.value)) << f.name;
  }
}

int64_t ContentLengthOf(const std::vector<Field>& fields) {
  const Rendered r = RenderFields(200, "OK", fields);
  EXPECT_TRUE(r.result.valid);
  return r.result.content_length;
}

TEST(RenderStatusAndFields, ContentLengthIsTheLastPlainDecimalField) {
  EXPECT_EQ(ContentLengthOf({}), -1);
  EXPECT_EQ(ContentLengthOf({{"X-Length", "5"}}), -1);
  EXPECT_EQ(ContentLengthOf({{"Content-Length", "0"}}), 0);
  EXPECT_EQ(ContentLengthOf({{"Content-Length", "5"}}), 5);
  EXPECT_EQ(ContentLengthOf({{"content-length", "00012"}}), 12);
  EXPECT_EQ(ContentLengthOf({{"CONTENT-LENGTH", "1234567890"}}), 1234567890);
  // 15 digits: the most that `+value` reads exactly in every case.
  EXPECT_EQ(ContentLengthOf({{"Content-Length", "999999999999999"}}),
            999999999999999);
  EXPECT_EQ(ContentLengthOf({{"Content-Length", "123456789012345"}}),
            123456789012345);
  // Anything else is lib/'s to read (`+value`): -1.
  for (const char* value :
       {" 12", "12 ", "0x10", "", "1234567890123456", "9999999999999999", "+5",
        "-1", "1e3", "1.5", "5,5", "\t5", "\xb5"}) {
    EXPECT_EQ(ContentLengthOf({{"Content-Length", value}}), -1)
        << "'" << value << "'";
  }
  // The last Content-Length field decides, plain or not.
  EXPECT_EQ(ContentLengthOf({{"Content-Length", "5"},
                             {"Content-Type", "text/plain"},
                             {"Content-Length", "7"}}),
            7);
  EXPECT_EQ(
      ContentLengthOf({{"Content-Length", "abc"}, {"Content-Length", "7"}}), 7);
  EXPECT_EQ(
      ContentLengthOf({{"Content-Length", "5"}, {"Content-Length", " 7"}}), -1);
  EXPECT_EQ(ContentLengthOf({{"Content-Length", "5"}, {"Content-Length", ""}}),
            -1);
  // Without validation too.
  const Rendered r = RenderFields(200, "OK", {{"Content-Length", "42"}}, false);
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.result.content_length, 42);
}

TEST(RenderStatusAndFields, AppendsAfterWhatIsThere) {
  // The addon renders the head after a string body in the writer's cork
  // buffer: nothing before it is cleared.
  const std::string body = "body bytes before the head";
  const Rendered r =
      RenderText(201, Joined("Created", {{"Location", "/x"}}), 1, true, body);
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes, body + "HTTP/1.1 201 Created\r\nLocation: /x\r\n");
  // Enough fields to grow the buffer several times: the bytes before stay.
  std::vector<Field> many;
  std::string expected = body + "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 200; i++) {
    many.push_back({"X-Field-" + std::to_string(i), std::string(i % 37, 'v')});
    expected += many.back().name + ": " + many.back().value + "\r\n";
  }
  const Rendered big = RenderText(200, Joined("OK", many), 200, true, body);
  ASSERT_TRUE(big.result.valid);
  EXPECT_EQ(big.bytes, expected);
}

// ---------------------------------------------------------------------------
// RenderRequestAndFields: the request line and the request's fields from
// "method\0path\0name\0value\0...", as _implicitHeader() passes
// `this.method + ' ' + this.path + ' HTTP/1.1\r\n'` and kOutHeaders to
// _storeHeader().

Rendered RenderRequest(const std::string& method, const std::string& path,
                       const std::vector<Field>& fields) {
  std::string text = method + '\0' + path + '\0';
  for (const Field& f : fields) text += f.name + '\0' + f.value + '\0';
  HeadBuffer head;
  Rendered out;
  out.result = RenderRequestAndFields(&head, U(text), text.size(),
                                      static_cast<uint32_t>(fields.size()));
  out.bytes.assign(head.bytes());
  return out;
}

TEST(RenderRequestAndFields, RequestLineAndFieldsByteForByte) {
  const Rendered r = RenderRequest("POST", "/api/items?q=caf\xe9",
                                   {{"Content-Type", "application/json"},
                                    {"Accept", "text/html"},
                                    {"Accept", "application/json"},
                                    {"Host", "127.0.0.1:8080"}});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes,
            "POST /api/items?q=caf\xe9 HTTP/1.1\r\n"
            "Content-Type: application/json\r\n"
            "Accept: text/html\r\n"
            "Accept: application/json\r\n"
            "Host: 127.0.0.1:8080\r\n");
  EXPECT_EQ(r.result.fields, 0u);
  EXPECT_EQ(r.result.content_length, -1);
}

TEST(RenderRequestAndFields, RenderedAsGivenWithoutChecks) {
  // Node checked the method, the path and each field when the request was
  // made and setHeader() stored it; _storeHeader() renders them as they
  // are (`validate` false), and so does this.
  const Rendered r = RenderRequest("get", "", {{"X Odd", "a\x01b"}});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.bytes, "get  HTTP/1.1\r\nX Odd: a\x01b\r\n");
}

TEST(RenderRequestAndFields, FieldFlagsAndContentLength) {
  const Rendered r = RenderRequest(
      "PUT", "/",
      {{"Connection", "close"}, {"Content-Length", "12"}, {"Expect", "x"}});
  ASSERT_TRUE(r.result.valid);
  EXPECT_EQ(r.result.fields,
            static_cast<uint32_t>(kFieldConnection | kFieldConnectionClose |
                                  kFieldContentLength | kFieldExpect));
  EXPECT_EQ(r.result.content_length, 12);
}

TEST(RenderRequestAndFields, PartsMissingOrTooManyAreInvalid) {
  HeadBuffer head;
  // No NUL after the method, none after the path.
  for (const std::string& text :
       {std::string("GET"), std::string("GET\0/", 5)}) {
    EXPECT_FALSE(RenderRequestAndFields(&head, U(text), text.size(), 0).valid)
        << text;
  }
  // A NUL of the caller's: more parts than the count says.
  const std::string extra("GET\0/a\0b\0", 9);
  EXPECT_FALSE(RenderRequestAndFields(&head, U(extra), extra.size(), 0).valid);
  // Fewer fields than the count.
  const std::string fewer("GET\0/\0A\0b\0", 10);
  EXPECT_FALSE(RenderRequestAndFields(&head, U(fewer), fewer.size(), 2).valid);
  EXPECT_TRUE(RenderRequestAndFields(&head, U(fewer), fewer.size(), 1).valid);
}

TEST(HeadBuffer, AppendRequestLine) {
  HeadBuffer head;
  head.AppendRequestLine(U("DELETE"), 6, U("/x/1"), 4);
  head.AppendRequestLine(U("CONNECT"), 7, U("example.test:443"), 16);
  EXPECT_EQ(head.bytes(),
            "DELETE /x/1 HTTP/1.1\r\nCONNECT example.test:443 HTTP/1.1\r\n");
}

}  // namespace
}  // namespace fast_response
