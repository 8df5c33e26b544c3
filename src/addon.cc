// Node-API glue: takes JavaScript values apart, hands them to head.cc and
// socket_write.cc, and reports back. No HTTP rules live here.
//
// All state is per environment (`Instance`, set with napi_set_instance_data):
// the addon loads in several worker_threads at once, each with its own.
#include <node_api.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "head.h"
#include "socket_write.h"

namespace fast_response {
namespace {

// Bytes whose capacity is kept from call to call. Unlike std::string,
// growing it does not zero-fill (a string body may be megabytes).
class Scratch {
 public:
  uint8_t* Reserve(size_t n) {
    if (n > capacity_) {
      capacity_ = std::max<size_t>({n, capacity_ * 2, 4096});
      data_.reset(new uint8_t[capacity_]);
    }
    return data_.get();
  }
  // Large areas are given back once a response is done with them.
  void Release() {
    if (capacity_ > kKeepBytes) {
      data_.reset();
      capacity_ = 0;
    }
  }
  const uint8_t* data() const { return data_.get(); }

 private:
  static constexpr size_t kKeepBytes = 1 << 20;
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
};

// The body argument, as lib/ classifies it (low two bits of `bodyFlags`).
enum BodyKind : uint32_t {
  kBodyNone = 0,    // nothing after the head (HEAD, 204, 304)
  kBodyUtf8 = 1,    // string, encoded as UTF-8
  kBodyLatin1 = 2,  // string, encoded as latin1 (also Node's 'ascii')
  kBodyBytes = 3,   // Buffer or Uint8Array, referenced, not copied
};
constexpr uint32_t kBodyKindMask = 3;
// Node writes `_header + chunk` as one UTF-8 string when the body is a
// UTF-8 string, so head bytes >= 0x80 go out UTF-8 encoded (lib/_http_outgoing
// `_send()`); with any other body the head goes out as latin1.
constexpr uint32_t kHeadUtf8 = 1u << 2;
// The head says `Transfer-Encoding: chunked` (writeHead() without
// Content-Length): the body goes out as one chunk and the last chunk, as
// write_() and end() frame it.
constexpr uint32_t kChunked = 1u << 3;

// `stateBits`: the response's state that _storeHeader() reads (lib/state.js).
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
};

// Result bits in results[1].
constexpr uint32_t kResultLast = 1u << 0;
constexpr uint32_t kResultChunked = 1u << 1;
constexpr uint32_t kResultShouldKeepAlive = 1u << 2;
constexpr uint32_t kResultFieldShift = 8;  // FieldFlag bits start here

// results[]: what a call reports back.
enum Result : size_t {
  kResultRemaining = 0,      // bytes not written, or kInvalid / kFallback
  kResultBits = 1,           // kResult* bits and FieldFlag bits (FieldShift)
  kResultBodyLength = 2,     // the body's length in bytes
  kResultWritten = 3,        // bytes writev(2) took, or -errno
  kResultContentLength = 4,  // last Content-Length field's value, or -1
  kResultCount = 5,
};

// args[]: the numeric arguments of writeResponse(), writeTemplate() and
// writeRendered(), set by lib/write.js before each call.
enum Arg : size_t {
  kArgFd = 0,
  kArgStatusCode = 1,
  kArgFieldCount = 2,
  kArgStateBits = 3,
  kArgKeepAliveSeconds = 4,  // Math.floor(keepAliveTimeout / 1000)
  kArgMaxRequests = 5,       // maxRequestsPerSocket, 0 for none
  kArgBodyFlags = 6,         // BodyKind | kHeadUtf8 | kChunked
  kArgBodyUnits = 7,         // a string body's length in UTF-16 code units
  kArgFieldFlags = 8,        // a template's FieldFlag bits
  kArgCount = 9,
};

// results[0] when nothing was written.
constexpr double kInvalid = -1;   // a field failed validation: let Node throw
constexpr double kFallback = -2;  // a case the fast path leaves to Node

// Fields that make the fast path step aside: chunked framing, trailers and
// `Expect` change what Node writes and when.
constexpr uint32_t kFallbackFields = kFieldTransferEncoding | kFieldTrailer |
                                     kFieldExpect |
                                     kFieldContentDispositionNonAscii;

// One part of what a writev(2) writes. `external` memory belongs to the
// caller (a Buffer body); the rest lives in the Instance until the next write.
struct Segment {
  const uint8_t* data;
  size_t len;
  bool external;
};
constexpr int kMaxSegments = 4;

// A chunked body (RFC 9112 §7.1) ends with the last chunk and no trailers.
constexpr char kLastChunk[] = "\r\n0\r\n\r\n";

struct Instance {
  HeadBuffer head;
  std::string head_utf8;
  // The reason phrase and fields as read from JavaScript (lib/fields.js).
  std::u16string units;
  std::string fields;
  Scratch body;
  DateCache date;
  // Float64Arrays shared with lib/ (setShared()): `results` as kResult*
  // says, `args` the numeric arguments of the write calls (kArg*). Numbers
  // written to a typed array cost JavaScript a store each; as Node-API
  // arguments each would cost a call to read.
  double* results = nullptr;
  double* args = nullptr;
  napi_ref results_ref = nullptr;
  napi_ref args_ref = nullptr;
  // What the last write left unwritten, for pending().
  // The segments of the last writev(2), and how many bytes it took.
  Segment segments[kMaxSegments];
  int segment_count = 0;
  char chunk_size_line[24];  // "<hex length>\r\n" of a chunked body
  size_t written = 0;

  ~Instance() = default;
};

void DeleteInstance(napi_env env, void* data, void* /*hint*/) {
  auto* inst = static_cast<Instance*>(data);
  if (inst->results_ref != nullptr)
    napi_delete_reference(env, inst->results_ref);
  if (inst->args_ref != nullptr) napi_delete_reference(env, inst->args_ref);
  delete inst;
}

Instance* GetInstance(napi_env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  return static_cast<Instance*>(data);
}

template <size_t N>
bool GetArgs(napi_env env, napi_callback_info info, napi_value (&argv)[N]) {
  size_t argc = N;
  return napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) ==
             napi_ok &&
         argc == N;
}

uint32_t ToUint32(napi_env env, napi_value v) {
  uint32_t u = 0;
  napi_get_value_uint32(env, v, &u);
  return u;
}

int64_t ToInt64(napi_env env, napi_value v) {
  int64_t i = 0;
  napi_get_value_int64(env, v, &i);
  return i;
}

void ThrowTypeError(napi_env env, const char* message) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
}

// Length of the ASCII prefix of `s` (bytes < 0x80), eight bytes at a time.
size_t AsciiPrefix(const uint8_t* s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, s + i, sizeof(word));
    if ((word & 0x8080808080808080ull) != 0) break;
  }
  while (i < n && s[i] < 0x80) i++;
  return i;
}

struct Span {
  const uint8_t* data = nullptr;
  size_t len = 0;
  bool in_scratch = false;
};

// Encodes or references the body. `units` is the string's length in UTF-16
// code units, which lib/ knows for free.
bool LoadBody(napi_env env, Instance* inst, napi_value body, uint32_t kind,
              size_t units, Span* out) {
  switch (kind) {
    case kBodyUtf8: {
      uint8_t* p = inst->body.Reserve(units * 3 + 1);
      size_t n = 0;
      if (napi_get_value_string_utf8(env, body, reinterpret_cast<char*>(p),
                                     units * 3 + 1, &n) != napi_ok)
        return false;
      *out = {p, n, true};
      return true;
    }
    case kBodyLatin1: {
      uint8_t* p = inst->body.Reserve(units + 1);
      size_t n = 0;
      if (napi_get_value_string_latin1(env, body, reinterpret_cast<char*>(p),
                                       units + 1, &n) != napi_ok)
        return false;
      *out = {p, n, true};
      return true;
    }
    case kBodyBytes: {
      napi_typedarray_type type;
      size_t length = 0;
      void* data = nullptr;
      if (napi_get_typedarray_info(env, body, &type, &length, &data, nullptr,
                                   nullptr) != napi_ok)
        return false;
      *out = {static_cast<const uint8_t*>(data), length, false};
      return true;
    }
    default:
      *out = {};
      return true;
  }
}

// Byte length of a body that is not sent (HEAD, 204, 304): Node still sets
// `_contentLength` to it.
size_t UnsentBodyLength(napi_env env, napi_value body, uint32_t kind,
                        size_t units) {
  if (kind == kBodyUtf8) {
    size_t n = 0;
    napi_get_value_string_utf8(env, body, nullptr, 0, &n);
    return n;
  }
  if (kind == kBodyLatin1) return units;
  if (kind == kBodyBytes) {
    size_t length = 0;
    napi_typedarray_type type;
    napi_get_typedarray_info(env, body, &type, &length, nullptr, nullptr,
                             nullptr);
    return length;
  }
  return 0;
}

// One writev(2) of head and body; records what is left for pending() and
// returns the number of bytes not written. An error writes nothing here:
// lib/ hands everything to socket.write(), and libuv meets the same error
// and reports it the way Node always does.
double WriteOut(Instance* inst, int fd, const uint8_t* head, size_t head_len,
                const Span& body, uint32_t body_flags) {
  if ((body_flags & kHeadUtf8) != 0) {
    // Latin1 head to UTF-8, only when it has a byte >= 0x80.
    size_t i = AsciiPrefix(head, head_len);
    if (i < head_len) {
      std::string& u = inst->head_utf8;
      u.assign(reinterpret_cast<const char*>(head), i);
      for (; i < head_len; i++) {
        const uint8_t c = head[i];
        if (c < 0x80) {
          u.push_back(static_cast<char>(c));
        } else {
          u.push_back(static_cast<char>(0xC0 | (c >> 6)));
          u.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        }
      }
      head = reinterpret_cast<const uint8_t*>(u.data());
      head_len = u.size();
    }
  }
  Segment* seg = inst->segments;
  int count = 0;
  seg[count++] = {head, head_len, false};
  const bool chunked = (body_flags & kChunked) != 0 && body.len > 0;
  if (chunked) {
    char* line = inst->chunk_size_line;
    size_t n = 0;
    char digits[16];
    size_t v = body.len;
    do {
      digits[n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    size_t k = 0;
    while (n > 0) line[k++] = digits[--n];
    line[k++] = '\r';
    line[k++] = '\n';
    seg[count++] = {reinterpret_cast<const uint8_t*>(line), k, false};
  }
  if (body.len > 0) seg[count++] = {body.data, body.len, !body.in_scratch};
  if (chunked) {
    seg[count++] = {reinterpret_cast<const uint8_t*>(kLastChunk),
                    sizeof(kLastChunk) - 1, false};
  }
  struct iovec iov[kMaxSegments];
  size_t total = 0;
  for (int i = 0; i < count; i++) {
    iov[i].iov_base = const_cast<uint8_t*>(seg[i].data);
    iov[i].iov_len = seg[i].len;
    total += seg[i].len;
  }
  const ssize_t n = Writev(fd, iov, count);
  size_t written = n > 0 ? static_cast<size_t>(n) : 0;
  const size_t total_written = written;
  // results[3]: the bytes written, or the error (-errno) of a failed
  // writev(2) other than EAGAIN. The socket reports some errors only once
  // (ECONNRESET; a second write sees EPIPE): lib/ has the socket's next
  // write fail with this one, as libuv would have reported it to Node.
  inst->results[kResultWritten] = n < 0 && n != -EAGAIN && n != -EWOULDBLOCK
                                      ? static_cast<double>(n)
                                      : static_cast<double>(written);
  // Keep only what was not written, for pending().
  int kept = 0;
  for (int i = 0; i < count; i++) {
    if (written >= seg[i].len) {
      written -= seg[i].len;
      continue;
    }
    seg[kept++] = {seg[i].data + written, seg[i].len - written,
                   seg[i].external};
    written = 0;
  }
  inst->segment_count = kept;
  if (kept == 0) inst->body.Release();
  return static_cast<double>(total - total_written);
}

MessageState ToMessageState(uint32_t bits, int64_t keep_alive_timeout_s,
                            int64_t max_requests) {
  MessageState s;
  s.send_date = (bits & kSendDate) != 0;
  s.should_keep_alive = (bits & kShouldKeepAlive) != 0;
  s.use_chunked_encoding_by_default = (bits & kUseChunkedByDefault) != 0;
  s.has_body = (bits & kHasBody) != 0;
  s.removed_connection = (bits & kRemovedConnection) != 0;
  s.removed_content_length = (bits & kRemovedContentLength) != 0;
  s.removed_transfer_encoding = (bits & kRemovedTransferEncoding) != 0;
  s.max_requests_on_connection_reached = (bits & kMaxRequestsReached) != 0;
  s.last = (bits & kLast) != 0;
  s.keep_alive_timeout_set = (bits & kKeepAliveTimeoutSet) != 0;
  s.keep_alive_timeout_s = keep_alive_timeout_s;
  s.max_requests = max_requests;
  return s;
}

// Reads a JavaScript string as latin1 bytes into `out` (its contents
// replaced), through `units` (UTF-16, reused). False when a character above
// U+00FF is in it: no latin1 byte says it, and Node's checks reject it in a
// reason phrase, a field-name or a field-value (Node's own path judges it).
bool ReadLatin1(napi_env env, napi_value v, std::u16string* units,
                std::string* out) {
  size_t n = 0;
  if (napi_get_value_string_utf16(env, v, nullptr, 0, &n) != napi_ok)
    return false;
  units->resize(n + 1);
  size_t copied = 0;
  if (napi_get_value_string_utf16(env, v, &(*units)[0], n + 1, &copied) !=
      napi_ok)
    return false;
  const size_t count = copied;  // a local whose address no store can alias
  out->resize(count);
  const char16_t* __restrict from = units->data();
  char* __restrict to = &(*out)[0];
  char16_t seen = 0;
  for (size_t i = 0; i < count; i++) {
    seen |= from[i];
    to[i] = static_cast<char>(from[i]);
  }
  return seen <= 0xFF;
}

// Parses a Content-Length field-value the way `+value` does for the plain
// case: 1 to 15 decimal digits. Returns -1 for anything else (lib/ then
// computes `+value` itself).
double SimpleDecimal(const uint8_t* s, size_t n) {
  if (n == 0 || n > 15) return -1;
  double v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Appends the status line and the caller's header fields to inst->head.
// `text` is one string: the reason phrase, then each field-name and
// field-value, every one followed by NUL ("OK\0name\0value\0", lib/fields.js),
// so that one string crosses into C++ instead of 1 + 2 x `count`. NUL is
// valid in none of them (RFC 9110 §5.6.2, §5.5; RFC 9112 §4), so a string
// that does not split into exactly that many parts holds a NUL of the
// caller's: invalid, and Node's own path judges it. The reason phrase is
// always checked (writeHead() checks statusMessage); the fields when
// `validate`. Returns the FieldFlag union and sets results[4] to the value
// of the last Content-Length field when it is plain decimal (else -1), or
// sets *invalid.
uint32_t AppendStatusAndFields(napi_env env, Instance* inst, int status_code,
                               napi_value text, uint32_t count, bool validate,
                               bool* invalid) {
  *invalid = true;
  inst->results[kResultContentLength] = -1;
  HeadBuffer& head = inst->head;
  head.Clear();
  std::string& parts = inst->fields;
  if (status_code < 100 || status_code > 999 ||
      !ReadLatin1(env, text, &inst->units, &parts))
    return 0;
  const auto* p = reinterpret_cast<const uint8_t*>(parts.data());
  const uint8_t* const end = p + parts.size();
  const auto* reason_end =
      static_cast<const uint8_t*>(std::memchr(p, 0, end - p));
  if (reason_end == nullptr || !IsFieldValue(p, reason_end - p)) return 0;
  head.AppendStatusLine(status_code, p, reason_end - p);
  p = reason_end + 1;
  uint32_t flags = 0;
  for (uint32_t i = 0; i < count; i++) {
    const auto* name_end =
        static_cast<const uint8_t*>(std::memchr(p, 0, end - p));
    if (name_end == nullptr) return 0;
    const auto* value = name_end + 1;
    const auto* value_end =
        static_cast<const uint8_t*>(std::memchr(value, 0, end - value));
    if (value_end == nullptr) return 0;
    const size_t name_len = name_end - p;
    const size_t value_len = value_end - value;
    if (validate && (!IsToken(p, name_len) || !IsFieldValue(value, value_len)))
      return 0;
    const uint32_t f = MatchField(p, name_len, value, value_len);
    if ((f & kFieldContentLength) != 0)
      inst->results[kResultContentLength] = SimpleDecimal(value, value_len);
    flags |= f;
    head.AppendField(p, name_len, value, value_len);
    p = value_end + 1;
  }
  if (p != end) return 0;  // more NULs than separators: one is the caller's
  *invalid = false;
  return flags;
}

// Shared by WriteResponse and WriteTemplate once inst->head holds the status
// line and the caller's fields (FieldFlag union `fields`): adds what
// _storeHeader() adds, writes head and body, and returns the head as a
// latin1 string (`_header`), or nullptr (undefined) with results[0] =
// kFallback and nothing written.
napi_value FinishAndWrite(napi_env env, Instance* inst, uint32_t fields,
                          napi_value body) {
  double* results = inst->results;
  const double* args = inst->args;
  if ((fields & kFallbackFields) != 0) {
    results[kResultRemaining] = kFallback;
    return nullptr;
  }
  const uint32_t state_bits = static_cast<uint32_t>(args[kArgStateBits]);
  const uint32_t body_flags = static_cast<uint32_t>(args[kArgBodyFlags]);
  const size_t units = static_cast<size_t>(args[kArgBodyUnits]);
  MessageState state = ToMessageState(
      state_bits, static_cast<int64_t>(args[kArgKeepAliveSeconds]),
      static_cast<int64_t>(args[kArgMaxRequests]));
  const uint32_t kind = body_flags & kBodyKindMask;
  Span span;
  size_t body_len = 0;
  if (state.has_body) {
    if (!LoadBody(env, inst, body, kind, units, &span)) {
      ThrowTypeError(env, "fast-response: body must be a string or Uint8Array");
      return nullptr;
    }
    body_len = span.len;
  } else {
    body_len = UnsentBodyLength(env, body, kind, units);
  }
  if ((state_bits & kContentLengthAsField) != 0) {
    if (state.has_body &&
        (fields & (kFieldContentLength | kFieldTransferEncoding)) == 0) {
      inst->head.AppendRaw("Content-Length: ");
      inst->head.AppendDecimal(body_len);
      inst->head.AppendRaw("\r\n");
      fields |= kFieldContentLength;
      results[kResultContentLength] = static_cast<double>(body_len);
    }
  } else {
    state.content_length = static_cast<int64_t>(body_len);
  }
  const HeadResult r = FinishHead(&inst->head, fields, state, &inst->date);
  // A chunked body (Content-Length removed with removeHeader()) needs Node's
  // chunk framing, which this one-writev path does not write.
  if (r.trailer_invalid || (r.chunked_encoding && state.has_body)) {
    results[kResultRemaining] = kFallback;
    return nullptr;
  }
  const HeadBuffer& head = inst->head;
  results[kResultRemaining] =
      WriteOut(inst, static_cast<int>(args[kArgFd]), head.data(), head.size(),
               span, body_flags);
  results[kResultBits] = static_cast<double>(
      (r.last ? kResultLast : 0u) | (r.chunked_encoding ? kResultChunked : 0u) |
      (r.should_keep_alive ? kResultShouldKeepAlive : 0u) |
      (fields << kResultFieldShift));
  results[kResultBodyLength] = static_cast<double>(body_len);
  napi_value head_string;
  napi_create_string_latin1(env, reinterpret_cast<const char*>(head.data()),
                            head.size(), &head_string);
  return head_string;
}

// The Float64Array `v` of at least `min_length` elements, or nullptr.
double* SharedArray(napi_env env, napi_value v, size_t min_length) {
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, v, &type, &length, &data, nullptr,
                               nullptr) != napi_ok ||
      type != napi_float64_array || length < min_length)
    return nullptr;
  return static_cast<double*>(data);
}

// setShared(results, args): the Float64Arrays results are reported in
// (kResultCount elements) and numeric arguments are passed in (kArgCount).
napi_value SetShared(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  Instance* inst = GetInstance(env);
  double* results = nullptr;
  double* args = nullptr;
  if (!GetArgs(env, info, argv) ||
      (results = SharedArray(env, argv[0], kResultCount)) == nullptr ||
      (args = SharedArray(env, argv[1], kArgCount)) == nullptr) {
    ThrowTypeError(env,
                   "fast-response: setShared() takes Float64Array(5) and "
                   "Float64Array(9)");
    return nullptr;
  }
  if (inst->results_ref != nullptr)
    napi_delete_reference(env, inst->results_ref);
  if (inst->args_ref != nullptr) napi_delete_reference(env, inst->args_ref);
  napi_create_reference(env, argv[0], 1, &inst->results_ref);
  napi_create_reference(env, argv[1], 1, &inst->args_ref);
  inst->results = results;
  inst->args = args;
  return nullptr;
}

// writeResponse(text, body), args: fd, statusCode, fieldCount, stateBits,
// keepAliveSeconds, maxRequests, bodyFlags, bodyUnits.
// `text`: the reason phrase and fieldCount fields (AppendStatusAndFields).
// Renders the head as writeHead() + _storeHeader() would and writes head and
// body with one writev(2). Returns the head as a latin1 string (`_header`),
// or undefined with results[0] = kInvalid / kFallback and nothing written.
napi_value WriteResponse(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  Instance* inst = GetInstance(env);
  if (!GetArgs(env, info, argv) || inst->results == nullptr) {
    ThrowTypeError(env, "fast-response: writeResponse() arguments");
    return nullptr;
  }
  const double* args = inst->args;
  const uint32_t state_bits = static_cast<uint32_t>(args[kArgStateBits]);
  bool invalid = false;
  const uint32_t fields = AppendStatusAndFields(
      env, inst, static_cast<int>(args[kArgStatusCode]), argv[0],
      static_cast<uint32_t>(args[kArgFieldCount]),
      (state_bits & kValidate) != 0, &invalid);
  if (invalid) {
    inst->results[kResultRemaining] = kInvalid;
    return nullptr;
  }
  return FinishAndWrite(env, inst, fields, argv[1]);
}

// compileTemplate(statusCode, text, count): validates and renders the status
// line and fields once (`text` as for writeResponse()). Returns a Buffer of
// those bytes with results[1] = their FieldFlag bits and results[4] as
// AppendStatusAndFields() sets it, or undefined (results[0] = kInvalid).
napi_value CompileTemplate(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  Instance* inst = GetInstance(env);
  if (!GetArgs(env, info, argv) || inst->results == nullptr) {
    ThrowTypeError(env, "fast-response: compileTemplate() arguments");
    return nullptr;
  }
  bool invalid = false;
  const uint32_t fields =
      AppendStatusAndFields(env, inst, static_cast<int>(ToInt64(env, argv[0])),
                            argv[1], ToUint32(env, argv[2]), true, &invalid);
  if (invalid) {
    inst->results[kResultRemaining] = kInvalid;
    return nullptr;
  }
  inst->results[kResultRemaining] = 0;
  inst->results[kResultBits] = static_cast<double>(fields);
  napi_value buffer;
  napi_create_buffer_copy(env, inst->head.size(), inst->head.data(), nullptr,
                          &buffer);
  return buffer;
}

// writeTemplate(prepared, body), args: fd, fieldFlags, stateBits,
// keepAliveSeconds, maxRequests, bodyFlags, bodyUnits.
// As writeResponse(), with the status line and fields taken from
// compileTemplate()'s Buffer.
napi_value WriteTemplate(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  Instance* inst = GetInstance(env);
  void* data = nullptr;
  size_t length = 0;
  if (!GetArgs(env, info, argv) || inst->results == nullptr ||
      napi_get_buffer_info(env, argv[0], &data, &length) != napi_ok) {
    ThrowTypeError(env, "fast-response: writeTemplate() arguments");
    return nullptr;
  }
  inst->head.Clear();
  inst->head.AppendRaw(static_cast<const uint8_t*>(data), length);
  inst->results[kResultContentLength] = -1;
  return FinishAndWrite(
      env, inst, static_cast<uint32_t>(inst->args[kArgFieldFlags]), argv[1]);
}

// Reads `_header` into inst->head. Node writes it as latin1, or, when the
// body is a UTF-8 string, `_header + chunk` as one UTF-8 string: then the
// latin1 bytes are encoded by WriteOut() (kHeadUtf8), unless `_header`
// holds a character above U+00FF (a re-encoded Content-Disposition can hold
// U+FFFD): such a head is read as UTF-8 here and *body_flags loses
// kHeadUtf8.
bool ReadRenderedHead(napi_env env, Instance* inst, napi_value header,
                      uint32_t* body_flags) {
  HeadBuffer& head = inst->head;
  head.Clear();
  size_t length = 0;
  size_t copied = 0;
  if ((*body_flags & kHeadUtf8) != 0) {
    std::string& bytes = inst->fields;
    if (ReadLatin1(env, header, &inst->units, &bytes)) {
      head.AppendRaw(bytes);
      return true;
    }
    *body_flags &= ~kHeadUtf8;
    if (napi_get_value_string_utf8(env, header, nullptr, 0, &length) != napi_ok)
      return false;
    napi_get_value_string_utf8(env, header, head.Extend(length + 1), length + 1,
                               &copied);
  } else {
    if (napi_get_value_string_latin1(env, header, nullptr, 0, &length) !=
        napi_ok)
      return false;
    napi_get_value_string_latin1(env, header, head.Extend(length + 1),
                                 length + 1, &copied);
  }
  head.Truncate(copied);
  return true;
}

// writeRendered(header, body), args: fd, bodyFlags, bodyUnits. Writes a head
// Node already rendered (`_header`, after writeHead()) and the body. Returns
// the number of bytes not written.
napi_value WriteRendered(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  Instance* inst = GetInstance(env);
  if (!GetArgs(env, info, argv) || inst->results == nullptr) {
    ThrowTypeError(env, "fast-response: writeRendered() arguments");
    return nullptr;
  }
  const double* args = inst->args;
  uint32_t body_flags = static_cast<uint32_t>(args[kArgBodyFlags]);
  const size_t units = static_cast<size_t>(args[kArgBodyUnits]);
  if (!ReadRenderedHead(env, inst, argv[0], &body_flags)) {
    ThrowTypeError(env, "fast-response: header must be a string");
    return nullptr;
  }
  Span span;
  if (!LoadBody(env, inst, argv[1], body_flags & kBodyKindMask, units, &span)) {
    ThrowTypeError(env, "fast-response: body must be a string or Uint8Array");
    return nullptr;
  }
  const double remaining =
      WriteOut(inst, static_cast<int>(args[kArgFd]), inst->head.data(),
               inst->head.size(), span, body_flags);
  inst->results[kResultRemaining] = remaining;
  inst->results[kResultBodyLength] = static_cast<double>(span.len);
  napi_value out;
  napi_create_double(env, remaining, &out);
  return out;
}

// pending(): what the last write left unwritten, in order, as an array:
// a Buffer (a copy) for bytes that live in this addon's reusable buffers
// (head, chunk framing, a string body), and for the rest of a Buffer body
// the number of its bytes not written yet: that memory is the caller's, and
// lib/ slices it without a copy.
napi_value Pending(napi_env env, napi_callback_info /*info*/) {
  Instance* inst = GetInstance(env);
  napi_value parts;
  if (napi_create_array_with_length(env, inst->segment_count, &parts) !=
      napi_ok)
    return nullptr;
  for (int i = 0; i < inst->segment_count; i++) {
    const Segment& seg = inst->segments[i];
    napi_value part;
    if (seg.external) {
      // The number of the Buffer body's bytes not written yet.
      napi_create_double(env, static_cast<double>(seg.len), &part);
    } else {
      void* out = nullptr;
      if (napi_create_buffer_copy(env, seg.len, seg.data, &out, &part) !=
          napi_ok)
        return nullptr;
    }
    napi_set_element(env, parts, i, part);
  }
  inst->segment_count = 0;
  inst->body.Release();
  return parts;
}

// formatDate(unixSeconds): the IMF-fixdate head.cc writes (for tests).
napi_value FormatDate(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!GetArgs(env, info, argv)) return nullptr;
  char text[DateCache::kLength + 1];
  DateCache::Format(ToInt64(env, argv[0]), text);
  napi_value out;
  napi_create_string_latin1(env, text, DateCache::kLength, &out);
  return out;
}

napi_value Init(napi_env env, napi_value exports) {
  auto* inst = new Instance();
  if (napi_set_instance_data(env, inst, DeleteInstance, nullptr) != napi_ok) {
    delete inst;
    return nullptr;
  }
  const napi_property_descriptor methods[] = {
      {"setShared", nullptr, SetShared, nullptr, nullptr, nullptr, napi_default,
       nullptr},
      {"writeResponse", nullptr, WriteResponse, nullptr, nullptr, nullptr,
       napi_default, nullptr},
      {"compileTemplate", nullptr, CompileTemplate, nullptr, nullptr, nullptr,
       napi_default, nullptr},
      {"writeTemplate", nullptr, WriteTemplate, nullptr, nullptr, nullptr,
       napi_default, nullptr},
      {"writeRendered", nullptr, WriteRendered, nullptr, nullptr, nullptr,
       napi_default, nullptr},
      {"pending", nullptr, Pending, nullptr, nullptr, nullptr, napi_default,
       nullptr},
      {"formatDate", nullptr, FormatDate, nullptr, nullptr, nullptr,
       napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(methods) / sizeof(methods[0]),
                         methods);
  return exports;
}

}  // namespace
}  // namespace fast_response

NAPI_MODULE_INIT() { return fast_response::Init(env, exports); }
