// src/message: the rules of one response beyond its header fields, as
// src/addon.cc applies them: which fields make the fast path step aside,
// the state bits lib/ passes (src/layout.h), where Content-Length goes
// (send()/template() as a field, end() as `_contentLength`), the result
// bits, chunk framing and the UTF-8 head next to a UTF-8 body.
#include "message.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "head.h"
#include "layout.h"

namespace fast_response {
namespace {

using namespace layout;  // NOLINT(build/namespaces): the contract's names

const uint8_t* U(const char* s) { return reinterpret_cast<const uint8_t*>(s); }
const uint8_t* U(const std::string& s) { return U(s.data()); }

// ---------------------------------------------------------------------------
// StepAsideForFields

TEST(StepAsideForFields, EachFieldAlone) {
  EXPECT_EQ(StepAsideForFields(0), kStepAsideNone);
  EXPECT_EQ(StepAsideForFields(kFieldTransferEncoding),
            kStepAsideTransferEncoding);
  EXPECT_EQ(StepAsideForFields(kFieldTransferEncoding | kFieldChunked),
            kStepAsideTransferEncoding);
  EXPECT_EQ(StepAsideForFields(kFieldExpect), kStepAsideExpect);
  EXPECT_EQ(StepAsideForFields(kFieldTrailer), kStepAsideTrailer);
  EXPECT_EQ(StepAsideForFields(kFieldContentDispositionNonAscii),
            kStepAsideContentDisposition);
}

TEST(StepAsideForFields, FieldsTheFastPathRenders) {
  // Every other FieldFlag, alone and all together, is rendered natively.
  const uint32_t rendered[] = {kFieldConnection,
                               kFieldConnectionClose,
                               kFieldConnectionNotClose,
                               kFieldContentLength,
                               kFieldDate,
                               kFieldKeepAlive,
                               kFieldChunked};
  uint32_t all = 0;
  for (const uint32_t f : rendered) {
    EXPECT_EQ(StepAsideForFields(f), kStepAsideNone) << f;
    all |= f;
  }
  EXPECT_EQ(StepAsideForFields(all), kStepAsideNone);
}

TEST(StepAsideForFields, FirstMatchInOrder) {
  // Transfer-Encoding, Expect, Trailer, then non-ASCII Content-Disposition.
  const uint32_t order[] = {kFieldTransferEncoding, kFieldExpect, kFieldTrailer,
                            kFieldContentDispositionNonAscii};
  const StepAside reasons[] = {kStepAsideTransferEncoding, kStepAsideExpect,
                               kStepAsideTrailer, kStepAsideContentDisposition};
  // Every combination of the four: the first one present decides.
  for (uint32_t mask = 1; mask < 16; mask++) {
    uint32_t fields = kFieldConnection | kFieldContentLength;
    size_t first = 4;
    for (size_t i = 0; i < 4; i++) {
      if ((mask & (1u << i)) == 0) continue;
      fields |= order[i];
      if (first == 4) first = i;
    }
    EXPECT_EQ(StepAsideForFields(fields), reasons[first]) << "mask " << mask;
  }
}

// ---------------------------------------------------------------------------
// StateFromBits

// The booleans of a MessageState, in the order of kStateMembers below.
using Member = bool MessageState::*;
struct StateMember {
  uint32_t bit;
  Member member;
  const char* name;
};
const StateMember kStateMembers[] = {
    {kSendDate, &MessageState::send_date, "send_date"},
    {kShouldKeepAlive, &MessageState::should_keep_alive, "should_keep_alive"},
    {kUseChunkedByDefault, &MessageState::use_chunked_encoding_by_default,
     "use_chunked_encoding_by_default"},
    {kHasBody, &MessageState::has_body, "has_body"},
    {kRemovedConnection, &MessageState::removed_connection,
     "removed_connection"},
    {kRemovedContentLength, &MessageState::removed_content_length,
     "removed_content_length"},
    {kRemovedTransferEncoding, &MessageState::removed_transfer_encoding,
     "removed_transfer_encoding"},
    {kMaxRequestsReached, &MessageState::max_requests_on_connection_reached,
     "max_requests_on_connection_reached"},
    {kLast, &MessageState::last, "last"},
    {kKeepAliveTimeoutSet, &MessageState::keep_alive_timeout_set,
     "keep_alive_timeout_set"},
    {kAgent, &MessageState::agent, "agent"},
};

// Which members are true, by name.
std::string TrueMembers(const MessageState& s) {
  std::string out;
  for (const StateMember& m : kStateMembers) {
    if (s.*(m.member)) out += std::string(out.empty() ? "" : " ") + m.name;
  }
  return out;
}

TEST(StateFromBits, NoBitsAllFalse) {
  const MessageState s = StateFromBits(0, 0, 0);
  EXPECT_EQ(TrueMembers(s), "");
  EXPECT_EQ(s.keep_alive_timeout_s, 0);
  EXPECT_EQ(s.max_requests, 0);
  // `_contentLength` is FinishResponseHead()'s to set.
  EXPECT_EQ(s.content_length, -1);
}

TEST(StateFromBits, EachBitItsMember) {
  for (const StateMember& m : kStateMembers) {
    const MessageState s = StateFromBits(m.bit, 0, 0);
    EXPECT_EQ(TrueMembers(s), m.name) << "bit 0x" << std::hex << m.bit;
    // And every bit but this one: every member but this one.
    uint32_t others = 0;
    for (const StateMember& o : kStateMembers) {
      if (o.bit != m.bit) others |= o.bit;
    }
    const MessageState t = StateFromBits(others, 0, 0);
    for (const StateMember& o : kStateMembers) {
      EXPECT_EQ(t.*(o.member), o.bit != m.bit) << o.name;
    }
  }
}

TEST(StateFromBits, EveryStateBitIsMappedOrNamedHere) {
  // The state bits that are not MessageState members: the write calls'
  // options. A new layout::StateBit must be added to one of the lists.
  const uint32_t options = kValidate | kContentLengthAsField;
  uint32_t mapped = 0;
  for (const StateMember& m : kStateMembers) mapped |= m.bit;
  uint32_t every = 0;
  for (const uint32_t b : check::kStateBits) every |= b;
  EXPECT_EQ(mapped & options, 0u);
  EXPECT_EQ(mapped | options, every);
  EXPECT_EQ(TrueMembers(StateFromBits(options, 0, 0)), "");
}

TEST(StateFromBits, KeepAliveNumbers) {
  const MessageState s = StateFromBits(kKeepAliveTimeoutSet, 5, 100);
  EXPECT_TRUE(s.keep_alive_timeout_set);
  EXPECT_EQ(s.keep_alive_timeout_s, 5);
  EXPECT_EQ(s.max_requests, 100);
  const MessageState n = StateFromBits(0, -2, 0);
  EXPECT_EQ(n.keep_alive_timeout_s, -2);
  EXPECT_FALSE(n.keep_alive_timeout_set);
}

// ---------------------------------------------------------------------------
// FinishResponseHead

struct Field {
  std::string name;
  std::string value;
};

// The bits of a keep-alive HTTP/1.1 response with a body on a server without
// keepAliveTimeout, no Date (its own test below).
constexpr uint32_t kBase = kShouldKeepAlive | kUseChunkedByDefault | kHasBody;

struct Finished {
  ResponseHead r;
  std::string head;   // status line, fields, what FinishResponseHead added
  std::string given;  // status line and the caller's fields
};

Finished Finish(const std::vector<Field>& fields, uint32_t bits,
                uint64_t body_length, int64_t keep_alive_s = 0,
                int64_t max_requests = 0) {
  std::string text = std::string("OK") + '\0';
  for (const Field& f : fields) text += f.name + '\0' + f.value + '\0';
  HeadBuffer head;
  const FieldsResult f = RenderStatusAndFields(
      &head, 200, U(text), text.size(), static_cast<uint32_t>(fields.size()),
      (bits & kValidate) != 0);
  EXPECT_TRUE(f.valid);
  Finished out;
  out.given.assign(head.bytes());
  DateCache date;
  out.r = FinishResponseHead(
      &head, f.fields, StateFromBits(bits, keep_alive_s, max_requests),
      (bits & kContentLengthAsField) != 0, body_length, &date);
  out.head.assign(head.bytes());
  return out;
}

// What FinishResponseHead() added after the caller's fields.
std::string Added(const Finished& f) {
  EXPECT_EQ(f.head.compare(0, f.given.size(), f.given), 0) << f.head;
  return f.head.substr(f.given.size());
}

TEST(FinishResponseHead, ContentLengthAsFieldAfterTheCallersFields) {
  // send(): writeHead(status, { ...headers, 'Content-Length': length }).
  const Finished f = Finish({{"Content-Type", "text/plain"}},
                            kBase | kContentLengthAsField, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_TRUE(f.r.content_length_added);
  EXPECT_EQ(f.head,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain\r\n"
            "Content-Length: 5\r\n"
            "Connection: keep-alive\r\n"
            "\r\n");
  // A Content-Length field: matchHeader() saw it.
  EXPECT_EQ(f.r.result_bits, static_cast<uint32_t>(kResultShouldKeepAlive |
                                                   kResultContentLengthField));
}

TEST(FinishResponseHead, ContentLengthAsFieldZeroAndLarge) {
  EXPECT_EQ(Added(Finish({}, kBase | kContentLengthAsField, 0)),
            "Content-Length: 0\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(
      Added(Finish({}, kBase | kContentLengthAsField, 9007199254740991ull)),
      "Content-Length: 9007199254740991\r\nConnection: "
      "keep-alive\r\n\r\n");
}

TEST(FinishResponseHead, ContentLengthAsFieldOnlyWithABody) {
  // HEAD, 204, 304: lib/'s withContentLength() adds none.
  const Finished f = Finish({{"ETag", "\"x\""}},
                            (kBase & ~kHasBody) | kContentLengthAsField, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_FALSE(f.r.content_length_added);
  EXPECT_EQ(Added(f), "Connection: keep-alive\r\n\r\n");
  EXPECT_EQ(f.r.result_bits, static_cast<uint32_t>(kResultShouldKeepAlive));
}

TEST(FinishResponseHead, ContentLengthAsFieldNotOverTheCallers) {
  // The caller's own Content-Length stays the only one, whatever it says.
  const Finished f =
      Finish({{"content-length", "3"}}, kBase | kContentLengthAsField, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_FALSE(f.r.content_length_added);
  EXPECT_EQ(f.head,
            "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n"
            "Connection: keep-alive\r\n\r\n");
  EXPECT_EQ(f.r.result_bits, static_cast<uint32_t>(kResultShouldKeepAlive |
                                                   kResultContentLengthField));
  // A Transfer-Encoding field: no Content-Length added (and Node's framing).
  const Finished te =
      Finish({{"Transfer-Encoding", "gzip"}}, kBase | kContentLengthAsField, 5);
  EXPECT_FALSE(te.r.content_length_added);
  EXPECT_EQ(te.r.step_aside, kStepAsideTransferEncoding);
}

TEST(FinishResponseHead, ContentLengthAsFieldKeepsHttp10Alive) {
  // `state.contLen` makes shouldSendKeepAlive true on HTTP/1.0 too.
  const Finished f = Finish({},
                            (kBase & ~kUseChunkedByDefault) |
                                kContentLengthAsField | kKeepAliveTimeoutSet,
                            5, 5);
  EXPECT_EQ(Added(f),
            "Content-Length: 5\r\nConnection: keep-alive\r\n"
            "Keep-Alive: timeout=5\r\n\r\n");
  EXPECT_EQ(f.r.result_bits, static_cast<uint32_t>(kResultShouldKeepAlive |
                                                   kResultContentLengthField));
}

TEST(FinishResponseHead, ContentLengthAsFieldOverRemovedContentLength) {
  // matchHeader('content-length') clears `_removedContLen`: no chunking.
  const Finished f =
      Finish({}, kBase | kRemovedContentLength | kContentLengthAsField, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_TRUE(f.r.content_length_added);
  EXPECT_EQ(Added(f), "Content-Length: 5\r\nConnection: keep-alive\r\n\r\n");
}

TEST(FinishResponseHead, ContentLengthAsContentLengthAfterConnection) {
  // end(data): `_contentLength` = the body's byte length, placed by
  // _storeHeader() after Connection and Keep-Alive.
  const Finished f = Finish({{"Content-Type", "text/plain"}},
                            kBase | kKeepAliveTimeoutSet, 5, 5, 100);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_FALSE(f.r.content_length_added);
  EXPECT_EQ(f.head,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain\r\n"
            "Connection: keep-alive\r\n"
            "Keep-Alive: timeout=5, max=100\r\n"
            "Content-Length: 5\r\n"
            "\r\n");
  // Not a field of the caller's: no kResultContentLengthField.
  EXPECT_EQ(f.r.result_bits, static_cast<uint32_t>(kResultShouldKeepAlive));
}

TEST(FinishResponseHead, ContentLengthAsContentLengthIsFinishHead) {
  // The same bytes and result as FinishHead() with `_contentLength` set.
  for (const uint32_t extra :
       {0u, static_cast<uint32_t>(kLast),
        static_cast<uint32_t>(kRemovedConnection),
        static_cast<uint32_t>(kRemovedTransferEncoding),
        static_cast<uint32_t>(kMaxRequestsReached | kKeepAliveTimeoutSet)}) {
    for (const uint32_t base :
         {kBase, kBase & ~kHasBody, kBase & ~kUseChunkedByDefault,
          kBase & ~kShouldKeepAlive}) {
      const uint32_t bits = base | extra;
      const Finished f = Finish({{"X-A", "b"}}, bits, 12, 3);
      ASSERT_EQ(f.r.step_aside, kStepAsideNone) << bits;
      HeadBuffer head;
      head.AppendRaw(f.given);
      MessageState state = StateFromBits(bits, 3, 0);
      state.content_length = 12;
      DateCache date;
      const HeadResult r = FinishHead(&head, 0, state, &date);
      EXPECT_EQ(f.head, head.bytes()) << "bits 0x" << std::hex << bits;
      EXPECT_EQ(f.r.result_bits, ResultBits(r, 0))
          << "bits 0x" << std::hex << bits;
    }
  }
}

TEST(FinishResponseHead, ContentLengthWithoutABodyIsNotWritten) {
  // HEAD, 204, 304: `!this._hasBody`.
  const Finished f = Finish({}, kBase & ~kHasBody, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_EQ(Added(f), "Connection: keep-alive\r\n\r\n");
}

TEST(FinishResponseHead, DateWhenSendDate) {
  const Finished f = Finish({}, kBase | kSendDate, 2);
  const std::string added = Added(f);
  ASSERT_EQ(added.size(), 6 + DateCache::kLength + 2 + 24 + 19 + 2) << added;
  EXPECT_EQ(added.substr(0, 6), "Date: ");
  EXPECT_EQ(added.substr(6 + DateCache::kLength),
            "\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n");
}

TEST(FinishResponseHead, StepsAsideForFields) {
  struct Case {
    Field field;
    StepAside reason;
  };
  const Case cases[] = {
      {{"Transfer-Encoding", "chunked"}, kStepAsideTransferEncoding},
      {{"transfer-encoding", "gzip"}, kStepAsideTransferEncoding},
      {{"Expect", "100-continue"}, kStepAsideExpect},
      {{"Trailer", "X-Checksum"}, kStepAsideTrailer},
      {{"Content-Disposition", "attachment; filename=\"\xe9t\xe9.txt\""},
       kStepAsideContentDisposition},
  };
  for (const Case& c : cases) {
    for (const uint32_t bits :
         {kBase, kBase | kContentLengthAsField, kBase & ~kHasBody}) {
      const Finished f = Finish({{"X-A", "b"}, c.field}, bits, 5);
      EXPECT_EQ(f.r.step_aside, c.reason) << c.field.name << " " << bits;
      EXPECT_FALSE(f.r.content_length_added) << c.field.name;
    }
  }
  // An ASCII Content-Disposition is rendered.
  const Finished ascii = Finish(
      {{"Content-Disposition", "attachment; filename=\"a.txt\""}}, kBase, 5);
  EXPECT_EQ(ascii.r.step_aside, kStepAsideNone);
}

TEST(FinishResponseHead, StepsAsideForAChunkedBody) {
  // res.removeHeader('Content-Length') before end(data): _storeHeader()
  // writes 'Transfer-Encoding: chunked' and Node frames every write.
  const Finished f = Finish({}, kBase | kRemovedContentLength, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideChunkedBody);
  // No body (HEAD, 204, 304): nothing to frame.
  const Finished none =
      Finish({}, (kBase & ~kHasBody) | kRemovedContentLength, 5);
  EXPECT_EQ(none.r.step_aside, kStepAsideNone);
  EXPECT_EQ(Added(none), "Connection: keep-alive\r\n\r\n");
  // Transfer-Encoding removed too: no framing, the body ends with the
  // connection (`_last`).
  const Finished both =
      Finish({}, kBase | kRemovedContentLength | kRemovedTransferEncoding, 5);
  EXPECT_EQ(both.r.step_aside, kStepAsideNone);
  EXPECT_EQ(Added(both), "Connection: keep-alive\r\n\r\n");
  EXPECT_EQ(both.r.result_bits,
            static_cast<uint32_t>(kResultLast | kResultShouldKeepAlive));
}

TEST(FinishResponseHead, ResultBitsOfTheCallersFields) {
  const Finished f = Finish({{"Connection", "close"},
                             {"Keep-Alive", "timeout=9"},
                             {"Content-Length", "5"}},
                            kBase, 5);
  EXPECT_EQ(f.r.step_aside, kStepAsideNone);
  EXPECT_EQ(Added(f), "\r\n");
  EXPECT_EQ(f.r.result_bits,
            static_cast<uint32_t>(
                kResultLast | kResultShouldKeepAlive | kResultConnectionField |
                kResultKeepAliveField | kResultContentLengthField));
  const Finished closed = Finish({}, kBase & ~kShouldKeepAlive, 5);
  EXPECT_EQ(Added(closed), "Connection: close\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(closed.r.result_bits, static_cast<uint32_t>(kResultLast));
}

// ---------------------------------------------------------------------------
// ResultBits

TEST(ResultBits, EachBit) {
  HeadResult none;
  none.last = false;
  none.chunked_encoding = false;
  none.should_keep_alive = false;
  none.trailer_invalid = false;
  EXPECT_EQ(ResultBits(none, 0), 0u);

  HeadResult r = none;
  r.last = true;
  EXPECT_EQ(ResultBits(r, 0), static_cast<uint32_t>(kResultLast));
  r = none;
  r.chunked_encoding = true;
  EXPECT_EQ(ResultBits(r, 0), static_cast<uint32_t>(kResultChunked));
  r = none;
  r.should_keep_alive = true;
  EXPECT_EQ(ResultBits(r, 0), static_cast<uint32_t>(kResultShouldKeepAlive));
  r = none;
  r.trailer_invalid = true;  // a step aside, not a bit
  EXPECT_EQ(ResultBits(r, 0), 0u);

  EXPECT_EQ(ResultBits(none, kFieldConnection),
            static_cast<uint32_t>(kResultConnectionField));
  EXPECT_EQ(ResultBits(none, kFieldConnection | kFieldConnectionClose),
            static_cast<uint32_t>(kResultConnectionField));
  EXPECT_EQ(ResultBits(none, kFieldKeepAlive),
            static_cast<uint32_t>(kResultKeepAliveField));
  EXPECT_EQ(ResultBits(none, kFieldContentLength),
            static_cast<uint32_t>(kResultContentLengthField));
  // The other FieldFlags have no result bit.
  EXPECT_EQ(ResultBits(none, kFieldDate | kFieldExpect | kFieldTrailer |
                                 kFieldTransferEncoding | kFieldChunked |
                                 kFieldContentDispositionNonAscii),
            0u);

  HeadResult all;
  all.last = true;
  all.chunked_encoding = true;
  all.should_keep_alive = true;
  uint32_t every = 0;
  for (const uint32_t b : check::kResultBits) every |= b;
  // kResultHeadAscii is the glue's (renderRequest() read the text), not the
  // head rules'.
  EXPECT_EQ(ResultBits(all, ~0u), every & ~kResultHeadAscii);
}

// ---------------------------------------------------------------------------
// AppendChunkSizeLine, kChunkEnd

std::string ChunkSizeLine(uint64_t length) {
  HeadBuffer out;
  out.AppendRaw("body");
  const size_t n = AppendChunkSizeLine(&out, length);
  EXPECT_EQ(n + 4, out.size());
  EXPECT_LE(n, kChunkSizeLineMax);
  EXPECT_EQ(out.bytes().substr(0, 4), "body");
  return std::string(out.bytes().substr(4));
}

TEST(AppendChunkSizeLine, HexDigitsAndCrlf) {
  // RFC 9112 §7.1: chunk-size = 1*HEXDIG; Node writes length.toString(16).
  EXPECT_EQ(ChunkSizeLine(0), "0\r\n");
  EXPECT_EQ(ChunkSizeLine(1), "1\r\n");
  EXPECT_EQ(ChunkSizeLine(15), "f\r\n");
  EXPECT_EQ(ChunkSizeLine(16), "10\r\n");
  EXPECT_EQ(ChunkSizeLine(255), "ff\r\n");
  EXPECT_EQ(ChunkSizeLine(256), "100\r\n");
  EXPECT_EQ(ChunkSizeLine(0xabcdef), "abcdef\r\n");
  EXPECT_EQ(ChunkSizeLine(uint64_t{1} << 32), "100000000\r\n");
  EXPECT_EQ(ChunkSizeLine(UINT64_MAX), "ffffffffffffffff\r\n");
  EXPECT_EQ(ChunkSizeLine(UINT64_MAX).size(), kChunkSizeLineMax);
}

TEST(AppendChunkSizeLine, ChunkEnd) {
  // The chunk's CRLF, the last chunk, the empty trailer section.
  EXPECT_EQ(kChunkEnd, "\r\n0\r\n\r\n");
}

// ---------------------------------------------------------------------------
// AppendLatin1AsUtf8

// Each byte as the code point U+0000..U+00FF, UTF-8 encoded.
std::string Utf8Of(const std::string& latin1) {
  std::string out;
  for (const unsigned char c : latin1) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

TEST(AppendLatin1AsUtf8, AsciiAppendsNothing) {
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 16u, 17u, 100u}) {
    std::string ascii(n, 'a');
    for (size_t i = 0; i < n; i++) ascii[i] = static_cast<char>(i % 128);
    HeadBuffer out;
    out.AppendRaw("x");
    EXPECT_FALSE(AppendLatin1AsUtf8(&out, U(ascii), ascii.size())) << n;
    EXPECT_EQ(out.bytes(), "x") << n;
  }
  HeadBuffer empty;
  EXPECT_FALSE(AppendLatin1AsUtf8(&empty, nullptr, 0));
  EXPECT_EQ(empty.size(), 0u);
}

TEST(AppendLatin1AsUtf8, EveryHighByteIsTwoBytes) {
  for (int c = 0x80; c <= 0xFF; c++) {
    const std::string one(1, static_cast<char>(c));
    HeadBuffer out;
    out.AppendRaw("x");
    ASSERT_TRUE(AppendLatin1AsUtf8(&out, U(one), 1)) << c;
    const std::string expected = {'x', static_cast<char>(0xC0 | (c >> 6)),
                                  static_cast<char>(0x80 | (c & 0x3F))};
    EXPECT_EQ(out.bytes(), expected) << c;
  }
  // All of them at once, after an ASCII prefix longer than a word.
  std::string all = "HTTP/1.1 200 OK\r\nX: ";
  for (int c = 0x80; c <= 0xFF; c++) all += static_cast<char>(c);
  all += "\r\n\r\n";
  HeadBuffer out;
  ASSERT_TRUE(AppendLatin1AsUtf8(&out, U(all), all.size()));
  EXPECT_EQ(out.bytes(), Utf8Of(all));
  EXPECT_EQ(out.size(), all.size() + 128);
  EXPECT_EQ(Utf8Of("caf\xe9"), "caf\xc3\xa9");  // the reference itself
}

TEST(AppendLatin1AsUtf8, HighByteAtEveryPosition) {
  // The ASCII prefix is skipped eight bytes at a time.
  for (size_t n : {1u, 7u, 8u, 9u, 16u, 17u, 25u}) {
    for (size_t at = 0; at < n; at++) {
      std::string s(n, 'a');
      s[at] = '\xff';
      HeadBuffer out;
      ASSERT_TRUE(AppendLatin1AsUtf8(&out, U(s), n)) << n << " " << at;
      EXPECT_EQ(out.bytes(), Utf8Of(s)) << n << " " << at;
    }
  }
}

TEST(AppendLatin1AsUtf8, SourceInsideTheSameBuffer) {
  // src/addon.cc converts the head it just rendered into the cork buffer,
  // appending to that buffer: Extend() may move it.
  const std::string head = "HTTP/1.1 200 Tr\xe8s bien\r\nX: \xe9t\xe9\r\n\r\n";
  const std::string body = "a string body";

  // Room enough: no reallocation.
  {
    HeadBuffer out;
    out.Extend(4096);
    out.Clear();
    out.AppendRaw(body);
    out.AppendRaw(head);
    const uint8_t* before = out.data();
    ASSERT_TRUE(
        AppendLatin1AsUtf8(&out, out.data() + body.size(), head.size()));
    EXPECT_EQ(out.data(), before) << "the test's premise: no reallocation";
    EXPECT_EQ(out.bytes(), body + head + Utf8Of(head));
  }
  // Extend() reallocates: the source moved with the buffer.
  for (size_t fill : {0u, 100u, 200u, 250u, 255u}) {
    HeadBuffer out;
    out.AppendRaw(std::string(fill, 'b'));  // the first 256-byte area
    // Fills the area: any growth reallocates.
    std::string latin1;
    for (size_t i = 0; fill + i < 256; i++) latin1 += "\xe9t\xe9 "[i % 4];
    out.AppendRaw(latin1);
    const uint8_t* before = out.data();
    ASSERT_TRUE(AppendLatin1AsUtf8(&out, out.data() + fill, latin1.size()))
        << fill;
    EXPECT_NE(out.data(), before) << "the test's premise: a reallocation";
    EXPECT_EQ(out.bytes(), std::string(fill, 'b') + latin1 + Utf8Of(latin1))
        << fill;
  }
  // A large head (a megabyte): many ASCII words, then a high byte at the end.
  {
    HeadBuffer out;
    std::string big(1 << 20, 'h');
    big.back() = '\xe9';
    out.AppendRaw(big);
    ASSERT_TRUE(AppendLatin1AsUtf8(&out, out.data(), big.size()));
    EXPECT_EQ(out.size(), 2 * big.size() + 1);
    EXPECT_TRUE(out.bytes().substr(big.size()) == Utf8Of(big));
  }
}

// ---------------------------------------------------------------------------
// FinishRequestHead: an outgoing request's head, as end(data) ->
// _implicitHeader() -> _storeHeader() complete it.

std::string RequestHead(const std::vector<Field>& fields, uint32_t bits,
                        uint64_t body_length, ResponseHead* r) {
  std::string text = std::string("POST") + '\0' + "/" + '\0';
  for (const Field& f : fields) text += f.name + '\0' + f.value + '\0';
  HeadBuffer head;
  const FieldsResult f = RenderRequestAndFields(
      &head, U(text), text.size(), static_cast<uint32_t>(fields.size()));
  EXPECT_TRUE(f.valid);
  DateCache date;
  *r = FinishRequestHead(&head, f.fields, StateFromBits(bits, 0, 0),
                         body_length, &date);
  return std::string(head.bytes());
}

TEST(FinishRequestHead, PostWithABodyOnAKeepAliveAgent) {
  ResponseHead r;
  EXPECT_EQ(RequestHead({{"Content-Type", "application/json"},
                         {"Host", "127.0.0.1:3000"}},
                        kBase | kAgent, 61, &r),
            "POST / HTTP/1.1\r\n"
            "Content-Type: application/json\r\n"
            "Host: 127.0.0.1:3000\r\n"
            "Connection: keep-alive\r\n"
            "Content-Length: 61\r\n"
            "\r\n");
  EXPECT_EQ(r.step_aside, kStepAsideNone);
  EXPECT_EQ(r.result_bits, static_cast<uint32_t>(kResultShouldKeepAlive));
}

TEST(FinishRequestHead, AnAgentKeepsAliveWhatNothingFrames) {
  // GET, HEAD, DELETE, OPTIONS, TRACE, CONNECT: useChunkedEncodingByDefault
  // is false. With an agent _storeHeader() still sends keep-alive
  // (`|| this.agent`), and a body goes out unframed, `_last` set.
  const uint32_t get = (kBase & ~kUseChunkedByDefault) | kAgent;
  ResponseHead r;
  EXPECT_EQ(RequestHead({}, get, 0, &r),
            "POST / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(r.result_bits,
            static_cast<uint32_t>(kResultShouldKeepAlive | kResultLast));
  // Without an agent (createConnection): no keep-alive field, `_last`.
  EXPECT_EQ(RequestHead({}, get & ~kAgent, 0, &r),
            "POST / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.result_bits,
            static_cast<uint32_t>(kResultShouldKeepAlive | kResultLast));
}

TEST(FinishRequestHead, AnAgentThatDoesNotKeepAlive) {
  // agent: false, or keepAlive false with maxSockets Infinity: the request
  // has shouldKeepAlive false and `_last`.
  ResponseHead r;
  EXPECT_EQ(
      RequestHead({}, (kBase & ~kShouldKeepAlive) | kAgent | kLast, 3, &r),
      "POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\n");
  EXPECT_EQ(r.result_bits, static_cast<uint32_t>(kResultLast));
}

TEST(FinishRequestHead, StepsAsideAsAResponseDoes) {
  ResponseHead r;
  RequestHead({{"Transfer-Encoding", "chunked"}}, kBase | kAgent, 3, &r);
  EXPECT_EQ(r.step_aside, kStepAsideTransferEncoding);
  RequestHead({{"Expect", "100-continue"}}, kBase | kAgent, 3, &r);
  EXPECT_EQ(r.step_aside, kStepAsideExpect);
  // removeHeader('Content-Length'): chunk framing.
  RequestHead({}, kBase | kAgent | kRemovedContentLength, 3, &r);
  EXPECT_EQ(r.step_aside, kStepAsideChunkedBody);
}

}  // namespace
}  // namespace fast_response
