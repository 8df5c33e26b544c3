#include "message.h"

#include <cstring>

namespace fast_response {

using namespace layout;  // NOLINT(build/namespaces): the contract's names

StepAside StepAsideForFields(uint32_t fields) {
  constexpr uint32_t kAny = kFieldTransferEncoding | kFieldExpect |
                            kFieldTrailer | kFieldContentDispositionNonAscii;
  if ((fields & kAny) == 0) return kStepAsideNone;
  if ((fields & kFieldTransferEncoding) != 0) return kStepAsideTransferEncoding;
  if ((fields & kFieldExpect) != 0) return kStepAsideExpect;
  if ((fields & kFieldTrailer) != 0) return kStepAsideTrailer;
  if ((fields & kFieldContentDispositionNonAscii) != 0)
    return kStepAsideContentDisposition;
  return kStepAsideNone;
}

MessageState StateFromBits(uint32_t bits, int64_t keep_alive_seconds,
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
  s.keep_alive_timeout_s = keep_alive_seconds;
  s.max_requests = max_requests;
  s.agent = (bits & kAgent) != 0;
  return s;
}

uint32_t ResultBits(const HeadResult& r, uint32_t fields) {
  return (r.last ? kResultLast : 0u) |
         (r.chunked_encoding ? kResultChunked : 0u) |
         (r.should_keep_alive ? kResultShouldKeepAlive : 0u) |
         ((fields & kFieldConnection) != 0 ? kResultConnectionField : 0u) |
         ((fields & kFieldKeepAlive) != 0 ? kResultKeepAliveField : 0u) |
         ((fields & kFieldContentLength) != 0 ? kResultContentLengthField : 0u);
}

ResponseHead FinishResponseHead(HeadBuffer* head, uint32_t fields,
                                const MessageState& state,
                                bool content_length_as_field,
                                uint64_t body_length, DateCache* date) {
  ResponseHead out;
  out.step_aside = StepAsideForFields(fields);
  if (out.step_aside != kStepAsideNone) return out;
  MessageState s = state;
  if (content_length_as_field) {
    // writeHead(status, { ...headers, 'Content-Length': length }).
    if (s.has_body &&
        (fields & (kFieldContentLength | kFieldTransferEncoding)) == 0) {
      head->AppendRaw("Content-Length: ");
      head->AppendDecimal(body_length);
      head->AppendRaw("\r\n");
      fields |= kFieldContentLength;
      out.content_length_added = true;
    }
  } else {
    // write_(): `_contentLength` is the body's length in bytes.
    s.content_length = static_cast<int64_t>(body_length);
  }
  const HeadResult r = FinishHead(head, fields, s, date);
  // A Trailer field without chunked framing: Node throws
  // ERR_HTTP_TRAILER_INVALID (unreachable after StepAsideForFields(), kept
  // as the rule's own check). A chunked body (Content-Length removed with
  // removeHeader()) needs Node's framing of every write.
  if (r.trailer_invalid) {
    out.step_aside = kStepAsideTrailer;
  } else if (r.chunked_encoding && s.has_body) {
    out.step_aside = kStepAsideChunkedBody;
  }
  out.result_bits = ResultBits(r, fields);
  return out;
}

ResponseHead FinishHeadOnly(HeadBuffer* head, uint32_t fields,
                            const MessageState& state, int64_t content_length,
                            DateCache* date) {
  ResponseHead out;
  out.step_aside = StepAsideForFields(fields);
  if (out.step_aside != kStepAsideNone) return out;
  MessageState s = state;
  s.content_length = content_length;
  const HeadResult r = FinishHead(head, fields, s, date);
  if (r.trailer_invalid) out.step_aside = kStepAsideTrailer;
  out.result_bits = ResultBits(r, fields);
  return out;
}

ResponseHead FinishRequestHead(HeadBuffer* head, uint32_t fields,
                               const MessageState& state, uint64_t body_length,
                               DateCache* date) {
  // A request's head follows the same _storeHeader() rules: only its first
  // line and `this.agent` (in `state`) differ.
  return FinishResponseHead(head, fields, state, false, body_length, date);
}

size_t AppendChunkSizeLine(HeadBuffer* out, uint64_t length) {
  char digits[16];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdef"[length & 15];
    length >>= 4;
  } while (length != 0);
  char* p = out->Extend(n + 2);
  for (size_t k = 0; k < n; k++) p[k] = digits[n - 1 - k];
  p[n] = '\r';
  p[n + 1] = '\n';
  return n + 2;
}

bool AppendLatin1AsUtf8(HeadBuffer* out, const uint8_t* latin1, size_t n) {
  // The ASCII prefix, eight bytes at a time.
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, latin1 + i, sizeof(word));
    if ((word & 0x8080808080808080ull) != 0) break;
  }
  while (i < n && latin1[i] < 0x80) i++;
  if (i == n) return false;
  size_t extra = 0;
  for (size_t k = i; k < n; k++) extra += latin1[k] >> 7;
  // `latin1` may live in `out`: copy the prefix before Extend() can move it.
  const size_t at = out->size();
  const bool inside = latin1 >= out->data() && latin1 < out->data() + at;
  const size_t from = inside ? static_cast<size_t>(latin1 - out->data()) : 0;
  char* p = out->Extend(n + extra);
  const uint8_t* src = inside ? out->data() + from : latin1;
  std::memcpy(p, src, i);
  p += i;
  for (; i < n; i++) {
    const uint8_t c = src[i];
    if (c < 0x80) {
      *p++ = static_cast<char>(c);
    } else {
      *p++ = static_cast<char>(0xC0 | (c >> 6));
      *p++ = static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return true;
}

}  // namespace fast_response
