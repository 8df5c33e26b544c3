// The HTTP rules of one outgoing response beyond its header fields: which
// fields make the fast path step aside, where Content-Length goes, how a
// chunked body is framed (RFC 9112 §7.1) and how the head is encoded next to
// a UTF-8 body. Plain C++17: nothing here knows of JavaScript; src/addon.cc
// only converts values for it.
#ifndef FAST_RESPONSE_MESSAGE_H_
#define FAST_RESPONSE_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "head.h"
#include "layout.h"

namespace fast_response {

// The caller's fields that make the fast path step aside, first match in
// this order: Transfer-Encoding (Node frames the body), Expect (Node waits
// for 100-continue), Trailer (Node writes trailers after the last chunk),
// a non-ASCII Content-Disposition (Node re-encodes it through a Buffer when
// Content-Length is known, nodejs/node#46528). kStepAsideNone otherwise.
layout::StepAside StepAsideForFields(uint32_t fields);

// The MessageState that layout::StateBit bits and the keep-alive numbers
// describe.
MessageState StateFromBits(uint32_t state_bits, int64_t keep_alive_seconds,
                           int64_t max_requests);

// What completing a head decided.
struct ResponseHead {
  layout::StepAside step_aside = layout::kStepAsideNone;
  uint32_t result_bits = 0;  // layout::ResultBit
  // Content-Length added as a field, with the body's length (send(),
  // template(): layout::kContentLengthAsField).
  bool content_length_added = false;
};

// Completes a head whose status line and caller's fields (FieldFlag union
// `fields`) are in `head`, as writeHead() + _storeHeader() do for a body of
// `body_length` bytes: Content-Length (as a field after the caller's when
// kContentLengthAsField, else where _storeHeader() puts `_contentLength`),
// Date, Connection, Keep-Alive, the empty line. Steps aside (nothing
// appended is meaningful then) for the fields StepAsideForFields() names, a
// body that would need chunk framing and a Trailer field Node rejects.
ResponseHead FinishResponseHead(HeadBuffer* head, uint32_t fields,
                                const MessageState& state,
                                bool content_length_as_field,
                                uint64_t body_length, DateCache* date);

// Completes a head whose status line and caller's fields are in `head` as
// writeHead() -> _storeHeader() do before any body is known: with
// `content_length` the response's `_contentLength` (end(data) and write()
// set it before they call writeHead() through _implicitHeader()), -1 where
// it is null. A response with a body and no framing field is then chunked
// (or, without chunked encoding by default, ends the connection), as Node
// decides. Steps aside for the fields StepAsideForFields() names and a
// Trailer field Node rejects.
ResponseHead FinishHeadOnly(HeadBuffer* head, uint32_t fields,
                            const MessageState& state, int64_t content_length,
                            DateCache* date);

// Completes the head of an outgoing request (http.ClientRequest) whose
// request line and fields are in `head` (RenderRequestAndFields()), as
// end(data) -> _implicitHeader() -> _storeHeader() do with `_contentLength`
// the body's `body_length` bytes: the rules of FinishResponseHead() with
// Content-Length where _storeHeader() puts `_contentLength`, and keep-alive
// sent for a request with an agent (`state.agent`) whatever frames its
// body. Steps aside as FinishResponseHead() does.
ResponseHead FinishRequestHead(HeadBuffer* head, uint32_t fields,
                               const MessageState& state, uint64_t body_length,
                               DateCache* date);

// The result bits of a head: HeadResult plus which fields the caller gave.
uint32_t ResultBits(const HeadResult& r, uint32_t fields);

// A body sent in one chunk (RFC 9112 §7.1): chunk-size line, data, CRLF,
// then the last chunk and the empty trailer section, as Node's write_() and
// end() frame a body given to end() after writeHead() without
// Content-Length.
constexpr size_t kChunkSizeLineMax = 16 + 2;  // hex digits of 64 bits, CRLF
// Appends "<hex length>\r\n"; returns its length.
size_t AppendChunkSizeLine(HeadBuffer* out, uint64_t length);
// What follows a chunk's data: its CRLF, the last chunk and no trailers.
constexpr std::string_view kChunkEnd = "\r\n0\r\n\r\n";
// An empty body: the last chunk alone.
constexpr std::string_view kLastChunk = kChunkEnd.substr(2);
// What follows the data of a chunk that is not the last (res.write()).
constexpr std::string_view kChunkDataEnd = kChunkEnd.substr(0, 2);

// Appends `latin1[0..n)` encoded as UTF-8 (each byte >= 0x80 as two bytes),
// what Node sends for a latin1 head written as part of a UTF-8 string.
// Returns false, appending nothing, when every byte is ASCII (the bytes are
// then the same).
bool AppendLatin1AsUtf8(HeadBuffer* out, const uint8_t* latin1, size_t n);

}  // namespace fast_response

#endif  // FAST_RESPONSE_MESSAGE_H_
