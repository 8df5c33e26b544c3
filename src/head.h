// Rendering of an HTTP/1.1 response head (RFC 9112 §4, §5), byte for byte as
// Node's lib/_http_outgoing.js `_storeHeader()` and lib/_http_server.js
// `writeHead()` render it. Plain C++17: nothing here knows of JavaScript.
//
//   status-line  = HTTP-version SP status-code SP [ reason-phrase ] CRLF
//   field-line   = field-name ":" SP field-value CRLF
//   head         = status-line *( field-line ) CRLF
//
// The caller appends the status line and the caller's header fields, then
// `FinishHead()` adds what Node adds on its own (Date, Connection, Keep-Alive,
// Content-Length) and the empty line, and reports how the response must be
// framed and whether the connection stays open.
#ifndef FAST_RESPONSE_HEAD_H_
#define FAST_RESPONSE_HEAD_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace fast_response {

// RFC 9110 §5.6.2 token, as Node's `checkIsHttpToken()`:
// 1*( "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" /
//     "`" / "|" / "~" / DIGIT / ALPHA ). Empty is not a token.
bool IsToken(const uint8_t* s, size_t n);

// Node's `checkInvalidHeaderChar()` accepts HTAB, SP..'~' and 0x80..0xFF;
// everything else (CR, LF, NUL, other controls, DEL) is rejected.
bool IsFieldValue(const uint8_t* s, size_t n);

// Case-insensitive comparison with a lower-case ASCII literal.
bool EqualsLower(const uint8_t* s, size_t n, const char* lower);

// Node's RE_CONN_CLOSE `/(?:^|\W)close(?:$|\W)/i` and the `chunkExpression`
// `/(?:^|\W)chunked(?:$|\W)/i`: `word` (lower case) standing alone.
bool ContainsWord(const uint8_t* s, size_t n, const char* word);

// What the header fields seen so far say, as Node's `matchHeader()` records.
enum FieldFlag : uint32_t {
  kFieldConnection = 1u << 0,        // a Connection field was given
  kFieldConnectionClose = 1u << 1,   // ... and it says "close"
  kFieldContentLength = 1u << 2,     // a Content-Length field was given
  kFieldTransferEncoding = 1u << 3,  // a Transfer-Encoding field was given
  kFieldChunked = 1u << 4,           // ... and it says "chunked"
  kFieldDate = 1u << 5,
  kFieldExpect = 1u << 6,
  kFieldTrailer = 1u << 7,
  kFieldKeepAlive = 1u << 8,  // a Keep-Alive field: Node then writes none
  // Content-Disposition with bytes >= 0x80: Node re-encodes such a value
  // through a Buffer when Content-Length is known (nodejs/node#46528); the
  // fast path leaves that case to Node.
  kFieldContentDispositionNonAscii = 1u << 9,
  // A Connection field without "close": matchHeader() sets shouldKeepAlive
  // for each such field, even when another Connection field says "close".
  kFieldConnectionNotClose = 1u << 10,
};

// Returns the FieldFlag bits that a field with this name and value sets.
uint32_t MatchField(const uint8_t* name, size_t name_len, const uint8_t* value,
                    size_t value_len);

// The state of the outgoing message that `_storeHeader()` reads, and the part
// of it that it changes. Names are Node's.
struct MessageState {
  bool send_date = true;
  bool should_keep_alive = true;
  bool use_chunked_encoding_by_default = true;
  bool has_body = true;
  bool removed_connection = false;
  bool removed_content_length = false;
  bool removed_transfer_encoding = false;
  bool max_requests_on_connection_reached = false;
  bool last = false;  // `_last` before the head is rendered
  // `Keep-Alive: timeout=<s>[, max=<n>]` is written only when
  // `keep_alive_timeout_set` (Node: `_keepAliveTimeout && _defaultKeepAlive`)
  // and no Keep-Alive field was given. Node writes
  // `Math.floor(_keepAliveTimeout / 1000)`; `max=` when `max_requests` > 0.
  bool keep_alive_timeout_set = false;
  int64_t keep_alive_timeout_s = 0;
  int64_t max_requests = 0;
  // Content-Length Node adds on its own (`_contentLength`), or -1 for none.
  int64_t content_length = -1;
  // A request sent through an http.Agent (`this.agent`): _storeHeader()
  // sends `Connection: keep-alive` for it even without a body's framing.
  bool agent = false;
};

// What `_storeHeader()` decided.
struct HeadResult {
  bool last = false;              // `_last`: close the connection afterwards
  bool chunked_encoding = false;  // `chunkedEncoding`
  bool should_keep_alive = true;  // `shouldKeepAlive` after the head
  bool trailer_invalid = false;   // Node throws ERR_HTTP_TRAILER_INVALID
};

// Bytes of a head under construction (and, in a Writer, of everything the
// writer copies). Reused from response to response: the capacity stays, the
// contents are cleared. Appending is a capacity check and a copy (a head is
// a few dozen small pieces; std::string's append costs more per piece than
// the copy does). Growing does not zero-fill (a string body may be
// megabytes).
class HeadBuffer {
 public:
  // What Release() keeps by default.
  static constexpr size_t kKeepBytes = 1 << 20;

  void Clear() { size_ = 0; }
  std::string_view bytes() const { return {data_.get(), size_}; }
  const uint8_t* data() const {
    return reinterpret_cast<const uint8_t*>(data_.get());
  }
  size_t size() const { return size_; }

  // Makes room for `n` more bytes and returns where they go.
  char* Extend(size_t n) {
    if (n > capacity_ - size_) Grow(n);
    char* at = data_.get() + size_;
    size_ += n;
    return at;
  }
  // Drops the bytes after the first `n`.
  void Truncate(size_t n) {
    if (n < size_) size_ = n;
  }
  // Clear(), and gives the area back when it grew beyond `keep` bytes (a
  // megabyte string body passed through): what a few heads need stays.
  void Release(size_t keep = kKeepBytes) {
    size_ = 0;
    if (capacity_ > keep) {
      data_.reset();
      capacity_ = 0;
    }
  }
  char* mutable_data() { return data_.get(); }

  // "HTTP/1.1 " status-code SP reason CRLF. `status_code` in 100..999.
  void AppendStatusLine(int status_code, const uint8_t* reason,
                        size_t reason_len);
  // method SP target " HTTP/1.1" CRLF.
  void AppendRequestLine(const uint8_t* method, size_t method_len,
                         const uint8_t* target, size_t target_len);
  // name ": " value CRLF, no checks.
  void AppendField(const uint8_t* name, size_t name_len, const uint8_t* value,
                   size_t value_len);
  void AppendRaw(const uint8_t* s, size_t n) {
    if (n != 0) std::memcpy(Extend(n), s, n);
  }
  void AppendRaw(std::string_view s) {
    AppendRaw(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  void AppendDecimal(uint64_t v);

 private:
  void Grow(size_t n);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// IMF-fixdate (RFC 9110 §5.6.7) of the current second, formatted at most
// once a second, as Node's `utcDate()` cache. One per thread's environment.
class DateCache {
 public:
  // "Sun, 06 Nov 1994 08:49:37 GMT": always 29 bytes.
  static constexpr size_t kLength = 29;
  const char* Now();
  // The second of the clock Now() reads (CLOCK_REALTIME, Unix seconds).
  static int64_t CurrentSecond();
  // Formats `unix_seconds` (exposed for tests).
  static void Format(int64_t unix_seconds, char out[kLength + 1]);

 private:
  int64_t second_ = -1;
  char text_[kLength + 1] = {};
};

// What the status line and the caller's header fields said.
struct FieldsResult {
  bool valid = false;   // everything passed Node's checks
  uint32_t fields = 0;  // the union of MatchField() over the fields
  // The value of the last Content-Length field when it is plain decimal (1
  // to 15 digits, what `+value` reads the same way), else -1.
  int64_t content_length = -1;
};

// Appends the status line and `count` header fields to `head`; when the
// result is not `valid`, part of them may have been appended (the caller
// truncates back). `text` holds the reason phrase, then each field-name and
// field-value, every one followed by NUL ("OK\0name\0value\0"): one string
// crosses from JavaScript instead of 1 + 2 x `count` (lib/headers.js). NUL is
// valid in none of them (RFC 9110 §5.6.2, §5.5; RFC 9112 §4), so a text that
// does not split into exactly that many parts holds a NUL of the caller's:
// invalid, and Node's own path judges it. The reason phrase is always
// checked (writeHead() checks statusMessage), the fields when `validate`.
// `status_code` outside 100..999 is invalid.
FieldsResult RenderStatusAndFields(HeadBuffer* head, int status_code,
                                   const uint8_t* text, size_t text_len,
                                   uint32_t count, bool validate);

// Appends the request line and `count` header fields of an outgoing request
// (http.ClientRequest) to `head`, as `_storeHeader(method + ' ' + path +
// ' HTTP/1.1\r\n', this[kOutHeaders])` renders them:
//
//   request-line = method SP request-target SP HTTP-version CRLF
//
// `text` holds the method, the request target (`path`), then each
// field-name and field-value, every one followed by NUL. Nothing is checked
// but the number of parts: Node validated the method and the path when the
// request was made, and every field when setHeader() stored it, and renders
// them as they are. A text that does not split into exactly that many parts
// (a NUL of the caller's) is not `valid`.
FieldsResult RenderRequestAndFields(HeadBuffer* head, const uint8_t* text,
                                    size_t text_len, uint32_t count);

// Appends what `_storeHeader()` appends after the caller's fields (Date,
// Connection, Keep-Alive, Content-Length) and the final CRLF; `fields` is the
// union of MatchField() over the caller's fields. Mirrors Node 18-26.
HeadResult FinishHead(HeadBuffer* head, uint32_t fields,
                      const MessageState& state, DateCache* date);

}  // namespace fast_response

#endif  // FAST_RESPONSE_HEAD_H_
