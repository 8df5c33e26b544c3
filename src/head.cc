#include "head.h"

#include <time.h>

#include <cstring>

namespace fast_response {

namespace {

// RFC 9110 §5.6.2 tchar, the set Node's `tokenRegExp` accepts.
constexpr bool IsTcharSlow(uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '!' || c == '#' || c == '$' ||
         c == '%' || c == '&' || c == '\'' || c == '*' || c == '+' ||
         c == '-' || c == '.' || c == '^' || c == '_' || c == '`' || c == '|' ||
         c == '~';
}

// Node's `headerCharRegex` is /[^\t\x20-\x7e\x80-\xff]/: these are allowed.
constexpr bool IsFieldVcharSlow(uint8_t c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

struct CharTable {
  bool tchar[256];
  bool field_vchar[256];
  constexpr CharTable() : tchar(), field_vchar() {
    for (int c = 0; c < 256; c++) {
      tchar[c] = IsTcharSlow(static_cast<uint8_t>(c));
      field_vchar[c] = IsFieldVcharSlow(static_cast<uint8_t>(c));
    }
  }
};

constexpr CharTable kChars;

constexpr uint8_t ToLower(uint8_t c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c + 32) : c;
}

// JavaScript's \w: [A-Za-z0-9_].
constexpr bool IsWordChar(uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '_';
}

}  // namespace

bool IsToken(const uint8_t* s, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++) {
    if (!kChars.tchar[s[i]]) return false;
  }
  return true;
}

bool IsFieldValue(const uint8_t* s, size_t n) {
  // Eight bytes at a time: a word with no byte below SP and no DEL is valid
  // (HTAB, the one control allowed, sends its word to the table).
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, s + i, sizeof(w));
    const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
    const uint64_t x = w ^ (kOnes * 0x7F);
    const uint64_t del = (x - kOnes) & ~x & kHigh;
    if ((below_space | del) == 0) continue;
    for (size_t k = i; k < i + 8; k++) {
      if (!kChars.field_vchar[s[k]]) return false;
    }
  }
  for (; i < n; i++) {
    if (!kChars.field_vchar[s[i]]) return false;
  }
  return true;
}

bool EqualsLower(const uint8_t* s, size_t n, const char* lower) {
  size_t i = 0;
  for (; i < n; i++) {
    if (lower[i] == '\0' || ToLower(s[i]) != static_cast<uint8_t>(lower[i]))
      return false;
  }
  return lower[i] == '\0';
}

bool ContainsWord(const uint8_t* s, size_t n, const char* word) {
  const size_t w = std::strlen(word);
  if (n < w) return false;
  for (size_t i = 0; i + w <= n; i++) {
    if (i > 0 && IsWordChar(s[i - 1])) continue;
    if (i + w < n && IsWordChar(s[i + w])) continue;
    size_t k = 0;
    while (k < w && ToLower(s[i + k]) == static_cast<uint8_t>(word[k])) k++;
    if (k == w) return true;
  }
  return false;
}

uint32_t MatchField(const uint8_t* name, size_t name_len, const uint8_t* value,
                    size_t value_len) {
  // Node's matchHeader() looks only at names of 4 to 17 characters, and
  // processHeader() at "content-disposition" (19).
  switch (name_len) {
    case 4:
      if (EqualsLower(name, name_len, "date")) return kFieldDate;
      break;
    case 6:
      if (EqualsLower(name, name_len, "expect")) return kFieldExpect;
      break;
    case 7:
      if (EqualsLower(name, name_len, "trailer")) return kFieldTrailer;
      break;
    case 10:
      if (EqualsLower(name, name_len, "connection")) {
        return ContainsWord(value, value_len, "close")
                   ? kFieldConnection | kFieldConnectionClose
                   : kFieldConnection | kFieldConnectionNotClose;
      }
      if (EqualsLower(name, name_len, "keep-alive")) return kFieldKeepAlive;
      break;
    case 14:
      if (EqualsLower(name, name_len, "content-length"))
        return kFieldContentLength;
      break;
    case 17:
      if (EqualsLower(name, name_len, "transfer-encoding")) {
        return ContainsWord(value, value_len, "chunked")
                   ? kFieldTransferEncoding | kFieldChunked
                   : kFieldTransferEncoding;
      }
      break;
    case 19:
      if (EqualsLower(name, name_len, "content-disposition")) {
        for (size_t i = 0; i < value_len; i++) {
          if (value[i] >= 0x80) return kFieldContentDispositionNonAscii;
        }
      }
      break;
    default:
      break;
  }
  return 0;
}

namespace {

// A Content-Length field-value as `+value` reads it in the plain case: 1 to
// 15 decimal digits. -1 for anything else (lib/ computes `+value` itself).
int64_t PlainDecimal(const uint8_t* s, size_t n) {
  if (n == 0 || n > 15) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Appends `count` header fields from `p` ("name\0value\0" each) to
// `head`, checked as writeHead() checks them when `validate`, and records
// what MatchField() finds in `out`. Returns where the fields end, or
// nullptr when a part is missing or a field fails the checks.
const uint8_t* AppendFields(HeadBuffer* head, const uint8_t* p,
                            const uint8_t* end, uint32_t count, bool validate,
                            FieldsResult* out) {
  for (uint32_t i = 0; i < count; i++) {
    const auto* name_end =
        static_cast<const uint8_t*>(std::memchr(p, 0, end - p));
    if (name_end == nullptr) return nullptr;
    const auto* value = name_end + 1;
    const auto* value_end =
        static_cast<const uint8_t*>(std::memchr(value, 0, end - value));
    if (value_end == nullptr) return nullptr;
    const size_t name_len = name_end - p;
    const size_t value_len = value_end - value;
    if (validate && (!IsToken(p, name_len) || !IsFieldValue(value, value_len)))
      return nullptr;
    const uint32_t f = MatchField(p, name_len, value, value_len);
    if ((f & kFieldContentLength) != 0)
      out->content_length = PlainDecimal(value, value_len);
    out->fields |= f;
    head->AppendField(p, name_len, value, value_len);
    p = value_end + 1;
  }
  return p;
}

}  // namespace

FieldsResult RenderStatusAndFields(HeadBuffer* head, int status_code,
                                   const uint8_t* text, size_t text_len,
                                   uint32_t count, bool validate) {
  FieldsResult out;
  if (status_code < 100 || status_code > 999) return out;
  const uint8_t* p = text;
  const uint8_t* const end = text + text_len;
  const auto* reason_end =
      static_cast<const uint8_t*>(std::memchr(p, 0, end - p));
  if (reason_end == nullptr || !IsFieldValue(p, reason_end - p)) return out;
  head->AppendStatusLine(status_code, p, reason_end - p);
  p = AppendFields(head, reason_end + 1, end, count, validate, &out);
  // More NULs than separators: one is the caller's.
  out.valid = p == end;
  return out;
}

FieldsResult RenderRequestAndFields(HeadBuffer* head, const uint8_t* text,
                                    size_t text_len, uint32_t count) {
  FieldsResult out;
  const uint8_t* const end = text + text_len;
  const auto* method_end =
      static_cast<const uint8_t*>(std::memchr(text, 0, end - text));
  if (method_end == nullptr) return out;
  const uint8_t* target = method_end + 1;
  const auto* target_end =
      static_cast<const uint8_t*>(std::memchr(target, 0, end - target));
  if (target_end == nullptr) return out;
  head->AppendRequestLine(text, method_end - text, target, target_end - target);
  const uint8_t* p =
      AppendFields(head, target_end + 1, end, count, false, &out);
  out.valid = p == end;
  return out;
}

void HeadBuffer::Grow(size_t n) {
  size_t capacity = capacity_ < 256 ? 256 : capacity_ * 2;
  while (capacity - size_ < n) capacity *= 2;
  std::unique_ptr<char[]> data(new char[capacity]);
  if (size_ != 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

void HeadBuffer::AppendStatusLine(int status_code, const uint8_t* reason,
                                  size_t reason_len) {
  char* p = Extend(13 + reason_len + 2);
  std::memcpy(p, "HTTP/1.1 ", 9);
  p[9] = static_cast<char>('0' + status_code / 100);
  p[10] = static_cast<char>('0' + status_code / 10 % 10);
  p[11] = static_cast<char>('0' + status_code % 10);
  p[12] = ' ';
  if (reason_len != 0) std::memcpy(p + 13, reason, reason_len);
  p[13 + reason_len] = '\r';
  p[14 + reason_len] = '\n';
}

void HeadBuffer::AppendRequestLine(const uint8_t* method, size_t method_len,
                                   const uint8_t* target, size_t target_len) {
  char* p = Extend(method_len + 1 + target_len + 11);
  if (method_len != 0) std::memcpy(p, method, method_len);
  p += method_len;
  *p++ = ' ';
  if (target_len != 0) std::memcpy(p, target, target_len);
  p += target_len;
  std::memcpy(p, " HTTP/1.1\r\n", 11);
}

void HeadBuffer::AppendField(const uint8_t* name, size_t name_len,
                             const uint8_t* value, size_t value_len) {
  char* p = Extend(name_len + 2 + value_len + 2);
  std::memcpy(p, name, name_len);
  p += name_len;
  *p++ = ':';
  *p++ = ' ';
  if (value_len != 0) std::memcpy(p, value, value_len);
  p += value_len;
  *p++ = '\r';
  *p = '\n';
}

void HeadBuffer::AppendDecimal(uint64_t v) {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char* p = Extend(n);
  while (n > 0) *p++ = digits[--n];
}

void DateCache::Format(int64_t unix_seconds, char out[kLength + 1]) {
  static constexpr char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed",
                                       "Thu", "Fri", "Sat"};
  static constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr",
                                          "May", "Jun", "Jul", "Aug",
                                          "Sep", "Oct", "Nov", "Dec"};
  const time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm;
  gmtime_r(&t, &tm);
  auto two = [](char* p, int v) {
    p[0] = static_cast<char>('0' + v / 10 % 10);
    p[1] = static_cast<char>('0' + v % 10);
  };
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  std::memcpy(out, kDays[tm.tm_wday], 3);
  out[3] = ',';
  out[4] = ' ';
  two(out + 5, tm.tm_mday);
  out[7] = ' ';
  std::memcpy(out + 8, kMonths[tm.tm_mon], 3);
  out[11] = ' ';
  const int year = tm.tm_year + 1900;
  two(out + 12, year / 100);
  two(out + 14, year % 100);
  out[16] = ' ';
  two(out + 17, tm.tm_hour);
  out[19] = ':';
  two(out + 20, tm.tm_min);
  out[22] = ':';
  two(out + 23, tm.tm_sec);
  std::memcpy(out + 25, " GMT", 4);
  out[kLength] = '\0';
}

int64_t DateCache::CurrentSecond() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec);
}

const char* DateCache::Now() {
  const int64_t now = CurrentSecond();
  if (now != second_) {
    second_ = now;
    Format(second_, text_);
  }
  return text_;
}

HeadResult FinishHead(HeadBuffer* head, uint32_t fields,
                      const MessageState& state, DateCache* date) {
  HeadResult result;
  result.last = state.last;
  result.should_keep_alive = state.should_keep_alive;
  result.chunked_encoding = (fields & kFieldChunked) != 0;

  // matchHeader(): each Connection field decides keep-alive by its value.
  if (fields & kFieldConnectionClose) result.last = true;
  if (fields & kFieldConnectionNotClose) result.should_keep_alive = true;

  if (state.send_date && !(fields & kFieldDate)) {
    head->AppendRaw("Date: ");
    head->AppendRaw(reinterpret_cast<const uint8_t*>(date->Now()),
                    DateCache::kLength);
    head->AppendRaw("\r\n");
  }

  // A server response has no `agent`; see _storeHeader()'s keep-alive logic.
  if (state.removed_connection && !(fields & kFieldConnection)) {
    result.last = !result.should_keep_alive;
  } else if (!(fields & kFieldConnection)) {
    const bool send_keep_alive =
        result.should_keep_alive &&
        ((fields & kFieldContentLength) ||
         state.use_chunked_encoding_by_default || state.agent);
    if (send_keep_alive && state.max_requests_on_connection_reached) {
      head->AppendRaw("Connection: close\r\n");
    } else if (send_keep_alive) {
      head->AppendRaw("Connection: keep-alive\r\n");
      if (state.keep_alive_timeout_set && !(fields & kFieldKeepAlive)) {
        head->AppendRaw("Keep-Alive: timeout=");
        if (state.keep_alive_timeout_s < 0) {
          head->AppendRaw("-");
          // Negated as unsigned: -INT64_MIN overflows int64_t.
          head->AppendDecimal(
              0 - static_cast<uint64_t>(state.keep_alive_timeout_s));
        } else {
          head->AppendDecimal(
              static_cast<uint64_t>(state.keep_alive_timeout_s));
        }
        if (state.max_requests > 0) {
          head->AppendRaw(", max=");
          head->AppendDecimal(static_cast<uint64_t>(state.max_requests));
        }
        head->AppendRaw("\r\n");
      }
    } else {
      result.last = true;
      head->AppendRaw("Connection: close\r\n");
    }
  }

  if (!(fields & (kFieldContentLength | kFieldTransferEncoding))) {
    const bool removed_cl =
        state.removed_content_length && !(fields & kFieldContentLength);
    const bool removed_te =
        state.removed_transfer_encoding && !(fields & kFieldTransferEncoding);
    if (!state.has_body) {
      result.chunked_encoding = false;
    } else if (!state.use_chunked_encoding_by_default) {
      result.last = true;
    } else if (!(fields & kFieldTrailer) && !removed_cl &&
               state.content_length >= 0) {
      head->AppendRaw("Content-Length: ");
      head->AppendDecimal(static_cast<uint64_t>(state.content_length));
      head->AppendRaw("\r\n");
    } else if (!removed_te) {
      head->AppendRaw("Transfer-Encoding: chunked\r\n");
      result.chunked_encoding = true;
    } else {
      result.last = true;
    }
  }

  if (!result.chunked_encoding && (fields & kFieldTrailer))
    result.trailer_invalid = true;

  head->AppendRaw("\r\n");
  return result;
}

}  // namespace fast_response
