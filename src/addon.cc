// Node-API glue (node-addon-api): takes JavaScript values apart, hands them
// to head.cc, message.cc and writer.cc, and reports back. No HTTP rule
// lives here; the layout of what crosses is src/layout.h.
//
// All state is per environment (`FastResponse`, node-addon-api's Addon<T>,
// kept as the environment's instance data): the addon loads in several
// worker_threads at once, each with its own.
//
// The write calls read their strings and body with plain Node-API calls
// into the writer's cork buffer: node-addon-api's String::Utf8Value() would
// copy them into a std::string first.
#include <napi.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "head.h"
#include "layout.h"
#include "message.h"
#include "utf8.h"
#include "writer.h"

namespace fast_response {
namespace {

using namespace layout;  // NOLINT(build/namespaces): the contract's names

// Where the body went: a range of the cork buffer, or the caller's memory.
struct Body {
  const uint8_t* external = nullptr;
  size_t offset = 0;
  size_t length = 0;
  uint32_t tag = 0;  // args[kArgBodyTag]: the caller's name for `external`
};

class FastResponse : public Napi::Addon<FastResponse> {
 public:
  FastResponse(Napi::Env env, Napi::Object exports) {
    Napi::Object constants = Napi::Object::New(env);
    for (const Constant& c : kConstants)
      constants.Set(c.name, static_cast<double>(c.value));
    Napi::Array names = Napi::Array::New(env, kStepAsideCount);
    for (uint32_t i = 0; i < kStepAsideCount; i++)
      names.Set(i, kStepAsideNames[i]);
    constants.Set("STEP_ASIDE_NAMES", names);
    constants.Freeze();
    Napi::Float64Array results = Napi::Float64Array::New(env, kResultCount);
    Napi::Float64Array args = Napi::Float64Array::New(env, kArgCount);
    results_ = results.Data();
    args_ = args.Data();
    results_ref_ = Napi::Persistent(results);
    args_ref_ = Napi::Persistent(args);
    DefineAddon(
        exports,
        {
            InstanceValue("layout", constants, napi_enumerable),
            InstanceValue("results", results, napi_enumerable),
            InstanceValue("args", args, napi_enumerable),
            HotMethod<&FastResponse::WriteResponse>(env, "writeResponse"),
            HotMethod<&FastResponse::WriteTemplate>(env, "writeTemplate"),
            HotMethod<&FastResponse::WriteRendered>(env, "writeRendered"),
            HotMethod<&FastResponse::WriteChunks>(env, "writeChunks"),
            HotMethod<&FastResponse::WriteChunk>(env, "writeChunk"),
            HotMethod<&FastResponse::FlushWriter, 0>(env, "flushWriter"),
            HotMethod<&FastResponse::RenderRequest, 1>(env, "renderRequest"),
            HotMethod<&FastResponse::RenderResponse, 1>(env, "renderResponse"),
            HotMethod<&FastResponse::ClockSecond, 0>(env, "clockSecond"),
            InstanceMethod("openWriter", &FastResponse::OpenWriter),
            InstanceMethod("closeWriter", &FastResponse::CloseWriter),
            InstanceMethod("compileTemplate", &FastResponse::CompileTemplate),
            InstanceMethod("pending", &FastResponse::Pending),
            InstanceMethod("formatDate", &FastResponse::FormatDate),
            InstanceMethod("writevCounts", &FastResponse::WritevCounts),
        });
  }

 private:
  using Hot = napi_value (FastResponse::*)(napi_env, napi_value, napi_value);

  // The write calls, one per response, skip node-addon-api's CallbackInfo
  // and instance lookup: a plain Node-API callback with this instance as
  // its data (benchmark/calls.js --callgrind: about 100 instructions a call
  // less than InstanceMethod()). `arity`: the arguments the call takes
  // (with one, the method's second is undefined).
  template <Hot method, size_t arity>
  static napi_value HotCallback(napi_env env, napi_callback_info info) {
    napi_value argv[2];
    size_t argc = 2;
    void* self = nullptr;
    if (napi_get_cb_info(env, info, &argc, argv, nullptr, &self) != napi_ok ||
        argc != arity)
      return ArgumentsError(env, "write");
    return (static_cast<FastResponse*>(self)->*method)(env, argv[0], argv[1]);
  }
  template <Hot method, size_t arity = 2>
  AddonProp HotMethod(Napi::Env env, const char* name) {
    napi_value fn = nullptr;
    napi_create_function(env, name, NAPI_AUTO_LENGTH,
                         HotCallback<method, arity>, this, &fn);
    return InstanceValue(name, Napi::Value(env, fn), napi_default);
  }

  // writeResponse(text, body), args: fd, statusCode, fieldCount, stateBits,
  // keepAliveSeconds, maxRequests, bodyFlags, bodyUnits. `text`: the
  // reason phrase and fieldCount fields (RenderStatusAndFields()).
  // Renders the head as writeHead() + _storeHeader() would and writes head
  // and body with one writev(2). Returns the head as a latin1 string
  // (`_header`), or undefined with results[kResultReason] saying why
  // nothing was written.
  napi_value WriteResponse(napi_env env, napi_value text, napi_value data) {
    const uint32_t state_bits = static_cast<uint32_t>(args_[kArgStateBits]);
    if (!ReadLatin1(env, text)) return SteppedAside(kStepAsideInvalid);
    return RenderAndWrite(env, data, text_ascii_, [&](HeadBuffer* head) {
      return RenderStatusAndFields(
          head, static_cast<int>(args_[kArgStatusCode]),
          reinterpret_cast<const uint8_t*>(text_.data()), text_.size(),
          static_cast<uint32_t>(args_[kArgFieldCount]),
          (state_bits & kValidate) != 0);
    });
  }

  // What a compiled template's Buffer holds before its bytes.
  struct TemplatePrefix {
    uint32_t fields;  // FieldFlag union
    uint32_t ascii;   // 1: every byte is ASCII
  };

  // compileTemplate(statusCode, text, count): validates and renders the
  // status line and fields once (`text` as for writeResponse()). Returns a
  // Buffer for writeTemplate() with results[kResultReason] the fields'
  // StepAside, results[kResultBits] their ResultBit field bits and
  // results[kResultContentLength] as RenderStatusAndFields() reads it; or
  // undefined (results[kResultReason] = kStepAsideInvalid).
  Napi::Value CompileTemplate(const Napi::CallbackInfo& info) {
    if (info.Length() != 3)
      return Napi::Value(info.Env(),
                         ArgumentsError(info.Env(), "compileTemplate"));
    HeadBuffer& cork = writer_.cork();
    writer_.Clear();
    cork.Extend(sizeof(TemplatePrefix));
    FieldsResult f;
    if (ReadLatin1(info.Env(), info[1])) {
      f = RenderStatusAndFields(&cork, info[0].As<Napi::Number>().Int32Value(),
                                reinterpret_cast<const uint8_t*>(text_.data()),
                                text_.size(),
                                info[2].As<Napi::Number>().Uint32Value(), true);
    }
    if (!f.valid) {
      writer_.Clear();
      return Napi::Value(info.Env(), SteppedAside(kStepAsideInvalid));
    }
    const TemplatePrefix prefix = {f.fields, text_ascii_ ? 1u : 0u};
    std::memcpy(cork.mutable_data(), &prefix, sizeof(prefix));
    results_[kResultReason] = StepAsideForFields(f.fields);
    results_[kResultBits] = ResultBits(HeadResult(), f.fields) &
                            (kResultConnectionField | kResultKeepAliveField |
                             kResultContentLengthField);
    results_[kResultContentLength] = static_cast<double>(f.content_length);
    Napi::Buffer<uint8_t> prepared =
        Napi::Buffer<uint8_t>::Copy(info.Env(), cork.data(), cork.size());
    writer_.Clear();
    return prepared;
  }

  // writeTemplate(prepared, body), args: fd, stateBits, keepAliveSeconds,
  // maxRequests, bodyFlags, bodyUnits. As writeResponse(), with the status
  // line and fields from compileTemplate()'s Buffer.
  napi_value WriteTemplate(napi_env env, napi_value prepared, napi_value data) {
    void* bytes = nullptr;
    size_t length = 0;
    if (napi_get_buffer_info(env, prepared, &bytes, &length) != napi_ok ||
        length < sizeof(TemplatePrefix))
      return ArgumentsError(env, "writeTemplate");
    TemplatePrefix prefix;
    std::memcpy(&prefix, bytes, sizeof(prefix));
    return RenderAndWrite(env, data, prefix.ascii != 0, [&](HeadBuffer* head) {
      FieldsResult f;
      f.fields = prefix.fields;
      head->AppendRaw(static_cast<const uint8_t*>(bytes) + sizeof(prefix),
                      length - sizeof(prefix));
      f.valid = true;
      return f;
    });
  }

  // writeRendered(header, body), args: fd, bodyFlags, bodyUnits, headUnits.
  // Writes a head Node already rendered (`_header`, after writeHead()) and
  // the body; a chunked head (kChunked) gets the body as one chunk and the
  // last chunk. Returns the number of bytes not written.
  napi_value WriteRendered(napi_env env, napi_value header, napi_value data) {
    Writer& writer = Begin();
    HeadBuffer& cork = writer.cork();
    const size_t start = cork.size();
    const uint32_t body_flags = static_cast<uint32_t>(args_[kArgBodyFlags]);
    // Node sends `_header + chunk` as one UTF-8 string (kHeadUtf8), or the
    // head as latin1: the same encoding here.
    const bool head_ok =
        AppendString(env, header, (body_flags & kHeadUtf8) != 0,
                     static_cast<size_t>(args_[kArgHeadUnits]), &cork);
    const size_t n = cork.size() - start;
    Body body;
    if (!head_ok ||
        !LoadBody(writer, env, data, body_flags,
                  static_cast<size_t>(args_[kArgBodyUnits]), &body)) {
      cork.Truncate(start);
      return !head_ok ? ArgumentsError(env, "writeRendered") : BodyError(env);
    }
    const size_t queued = writer.queued_bytes();
    writer.SendCopied(start, n);
    SendBody(writer, body, (body_flags & kChunked) != 0);
    const double remaining = End(writer, queued);
    results_[kResultBodyLength] = static_cast<double>(body.length);
    napi_value out;
    napi_create_double(env, remaining, &out);
    return out;
  }

  // writeChunks(header, entries), args: fd, bodyFlags (the string
  // entries' BodyKind, kBodyLatin1, or kBodyUtf8 where they are beyond
  // ASCII: encoded by AppendBeyondAscii(); kChunked: the last chunk
  // follows), bodyBytes (the chunk's size), headUnits (`_header.length`).
  // `entries`: Node's kChunkedBuffer of a response, [chunk, encoding,
  // callback] repeated; each chunk a string (encoded as bodyFlags says) or
  // a Uint8Array. Writes the head, the entries as one chunk (size line, the
  // chunks in order, CRLF) and the last chunk, as Node's uncork() and end()
  // send them, with one writev(2); everything is copied (pending() gives
  // copies). Returns the bytes not written.
  napi_value WriteChunks(napi_env env, napi_value header, napi_value entries) {
    return WriteOneChunk(
        env, header, "writeChunks", [&](bool utf8, HeadBuffer* cork) {
          uint32_t length = 0;
          bool ok = napi_get_array_length(env, entries, &length) == napi_ok;
          for (uint32_t i = 0; ok && i < length; i += 3) {
            napi_value chunk;
            napi_valuetype type;
            ok = napi_get_element(env, entries, i, &chunk) == napi_ok &&
                 napi_typeof(env, chunk, &type) == napi_ok;
            if (ok && type == napi_string) {
              size_t units = 0;
              ok = napi_get_value_string_utf16(env, chunk, nullptr, 0,
                                               &units) == napi_ok &&
                   (utf8 ? AppendBeyondAscii(env, chunk, units, cork)
                         : AppendString(env, chunk, false, units, cork));
            } else if (ok) {
              const uint8_t* bytes = nullptr;
              size_t n = 0;
              ok = Uint8ArrayBytes(env, chunk, &bytes, &n);
              if (ok) cork->AppendRaw(bytes, n);
            }
          }
          return ok;
        });
  }

  // writeChunk(header, data), args as writeChunks()'s and bodyUnits
  // (`data.length`): `data` one string, the entries' strings joined, as one
  // chunk: the bytes writeChunks() writes for entries whose strings join
  // into the same bytes (latin1, or UTF-8 beyond ASCII where no surrogate
  // pair is written apart).
  napi_value WriteChunk(napi_env env, napi_value header, napi_value data) {
    return WriteOneChunk(
        env, header, "writeChunk", [&](bool utf8, HeadBuffer* cork) {
          const size_t units = static_cast<size_t>(args_[kArgBodyUnits]);
          if (utf8 &&
              (static_cast<uint32_t>(args_[kArgBodyFlags]) & kBodyEncoded) != 0)
            return AppendEncoded(env, data, cork);
          return utf8 ? AppendBeyondAscii(env, data, units, cork)
                      : AppendString(env, data, false, units, cork);
        });
  }

  // writeChunks() and writeChunk(): the head, the size line, the body
  // `append_body(utf8, cork)` appends (false: not its arguments), CRLF or
  // with kChunked the last chunk, with one writev(2).
  template <typename AppendBody>
  napi_value WriteOneChunk(napi_env env, napi_value header, const char* name,
                           AppendBody append_body) {
    writer_.Clear();
    Writer& writer = writer_;
    HeadBuffer& cork = writer.cork();
    const uint32_t body_flags = static_cast<uint32_t>(args_[kArgBodyFlags]);
    const bool utf8 = (body_flags & kBodyKindMask) == kBodyUtf8;
    bool ok = AppendString(env, header, false,
                           static_cast<size_t>(args_[kArgHeadUnits]), &cork);
    AppendChunkSizeLine(&cork, static_cast<uint64_t>(args_[kArgBodyBytes]));
    if (!ok || !append_body(utf8, &cork)) {
      writer.Clear();
      return ArgumentsError(env, name);
    }
    cork.AppendRaw((body_flags & kChunked) != 0 ? kChunkEnd : kChunkDataEnd);
    writer.SendCopied(0, cork.size());
    const double remaining = End(writer, 0);
    napi_value out;
    napi_create_double(env, remaining, &out);
    return out;
  }

  // Appends a string of at most `units` UTF-16 code units to the cork
  // buffer as UTF-8 or latin1 bytes, as Node's socket encodes a chunk
  // written with that encoding (a lone surrogate as U+FFFD). False, nothing
  // appended, when `string` is not a string.
  static bool AppendString(napi_env env, napi_value string, bool utf8,
                           size_t units, HeadBuffer* cork) {
    const size_t at = cork->size();
    const size_t room = (utf8 ? units * 3 : units) + 1;
    char* p = cork->Extend(room);
    size_t n = 0;
    const napi_status status =
        utf8 ? napi_get_value_string_utf8(env, string, p, room, &n)
             : napi_get_value_string_latin1(env, string, p, room, &n);
    cork->Truncate(status == napi_ok ? at + n : at);
    return status == napi_ok;
  }

  // AppendString() of a string the caller found beyond ASCII, as UTF-8:
  // read as UTF-16 into utf16_ and encoded by EncodeUtf8() (src/utf8.h),
  // where V8's encoding through Node-API (napi_get_value_string_utf8())
  // costs about 16 instructions a byte beyond ASCII. (V8's is kept for
  // ASCII, which it copies.)
  bool AppendBeyondAscii(napi_env env, napi_value string, size_t units,
                         HeadBuffer* cork) {
    if (utf16_.size() < units + 1) utf16_.resize(units + 1);
    size_t n = 0;
    const bool ok = napi_get_value_string_utf16(env, string, utf16_.data(),
                                                units + 1, &n) == napi_ok;
    if (ok) {
      const size_t at = cork->size();
      char* p = cork->Extend(MaxUtf8Bytes(n));
      cork->Truncate(at + EncodeUtf8(utf16_.data(), n, p));
    }
    // A large string's copy is not kept for the environment's life.
    if (utf16_.size() > kKeptUtf16Units) std::vector<char16_t>().swap(utf16_);
    return ok;
  }

  // A UTF-8 string's bytes, encoded by Node (kBodyEncoded: a Uint8Array),
  // copied as AppendString() copies a string's. False, nothing appended,
  // for any other value.
  static bool AppendEncoded(napi_env env, napi_value data, HeadBuffer* cork) {
    const uint8_t* bytes = nullptr;
    size_t length = 0;
    if (!Uint8ArrayBytes(env, data, &bytes, &length)) return false;
    cork->AppendRaw(bytes, length);
    return true;
  }

  // The bytes of a Uint8Array (a Buffer); false for any other value.
  static bool Uint8ArrayBytes(napi_env env, napi_value value,
                              const uint8_t** bytes, size_t* length) {
    napi_typedarray_type type;
    void* data = nullptr;
    if (napi_get_typedarray_info(env, value, &type, length, &data, nullptr,
                                 nullptr) != napi_ok ||
        type != napi_uint8_array)
      return false;
    *bytes = static_cast<const uint8_t*>(data);
    return true;
  }

  // writevCounts(): [writev(2) calls, bytes they took] since the addon
  // loaded in this environment (stats() reports the difference).
  Napi::Value WritevCounts(const Napi::CallbackInfo& info) {
    Napi::Array counts = Napi::Array::New(info.Env(), 2);
    counts.Set(0u, writev_calls_);
    counts.Set(1u, writev_bytes_);
    return counts;
  }

  // renderRequest(text), args: fieldCount, stateBits, bodyBytes. `text`: the
  // method, the request target and fieldCount fields
  // (RenderRequestAndFields()). Renders the head of an outgoing request as
  // end(data) -> _storeHeader() would for a body of bodyBytes bytes, and
  // writes nothing: the request waits for its socket, and lib/client.js
  // writes the head with the body through writeRendered() then. Returns the
  // head as a latin1 string (`_header`), with results[kResultBits] and
  // results[kResultContentLength] as writeResponse() reports them; or
  // undefined, with results[kResultReason] saying why.
  napi_value RenderRequest(napi_env env, napi_value text,
                           napi_value /*unused*/) {
    if (!ReadAsciiOrLatin1(env, text)) return SteppedAside(kStepAsideInvalid);
    HeadBuffer& head = writer_.cork();
    writer_.Clear();
    const FieldsResult f = RenderRequestAndFields(
        &head, reinterpret_cast<const uint8_t*>(text_.data()), text_.size(),
        static_cast<uint32_t>(args_[kArgFieldCount]));
    const ResponseHead r =
        f.valid ? FinishRequestHead(
                      &head, f.fields,
                      StateFromBits(static_cast<uint32_t>(args_[kArgStateBits]),
                                    0, 0),
                      static_cast<uint64_t>(args_[kArgBodyBytes]), &date_)
                : ResponseHead{kStepAsideInvalid, 0, false};
    return RenderedHead(env, f, r);
  }

  // renderResponse(text), args: statusCode, fieldCount, stateBits,
  // keepAliveSeconds, maxRequests, bodyBytes (`_contentLength`, -1 where
  // it is null). `text`: the reason phrase and fieldCount fields
  // (RenderStatusAndFields(), validated). Renders the head as writeHead()
  // -> _storeHeader() would, and writes nothing: install({ patchEnd: true
  // })'s writeHead() (lib/write-head.js) sets it as `_header`, and the
  // response's end() or first write() sends it. Returns the head as a
  // latin1 string, with results[kResultBits] and
  // results[kResultContentLength] as writeResponse() reports them; or
  // undefined, with results[kResultReason] saying why.
  napi_value RenderResponse(napi_env env, napi_value text,
                            napi_value /*unused*/) {
    if (!ReadLatin1(env, text)) return SteppedAside(kStepAsideInvalid);
    HeadBuffer& head = writer_.cork();
    writer_.Clear();
    const FieldsResult f = RenderStatusAndFields(
        &head, static_cast<int>(args_[kArgStatusCode]),
        reinterpret_cast<const uint8_t*>(text_.data()), text_.size(),
        static_cast<uint32_t>(args_[kArgFieldCount]), true);
    const ResponseHead r =
        f.valid ? FinishHeadOnly(
                      &head, f.fields,
                      StateFromBits(
                          static_cast<uint32_t>(args_[kArgStateBits]),
                          static_cast<int64_t>(args_[kArgKeepAliveSeconds]),
                          static_cast<int64_t>(args_[kArgMaxRequests])),
                      static_cast<int64_t>(args_[kArgBodyBytes]), &date_)
                : ResponseHead{kStepAsideInvalid, 0, false};
    return RenderedHead(env, f, r);
  }

  // The end of renderRequest() and renderResponse(): the head rendered in
  // the environment's writer as a latin1 string, with results[kResultBits]
  // and results[kResultContentLength]; or undefined, with
  // results[kResultReason] saying why. The writer is left empty.
  napi_value RenderedHead(napi_env env, const FieldsResult& f,
                          const ResponseHead& r) {
    if (r.step_aside != kStepAsideNone) {
      writer_.Clear();
      return SteppedAside(r.step_aside);
    }
    const HeadBuffer& head = writer_.cork();
    napi_value header;
    napi_create_string_latin1(env, reinterpret_cast<const char*>(head.data()),
                              head.size(), &header);
    writer_.Clear();
    results_[kResultReason] = kStepAsideNone;
    results_[kResultBits] =
        r.result_bits | (text_ascii_ ? kResultHeadAscii : 0u);
    results_[kResultContentLength] = static_cast<double>(f.content_length);
    return header;
  }

  // openWriter(): a writer of one socket's own (its batch), as an index for
  // args[kArgWriter]. closeWriter(index): forgets it (the socket closed).
  Napi::Value OpenWriter(const Napi::CallbackInfo& info) {
    uint32_t index;
    if (!free_writers_.empty()) {
      index = free_writers_.back();
      free_writers_.pop_back();
    } else {
      index = static_cast<uint32_t>(socket_writers_.size());
      socket_writers_.push_back(std::make_unique<Writer>());
    }
    return Napi::Number::New(info.Env(), index);
  }

  Napi::Value CloseWriter(const Napi::CallbackInfo& info) {
    const int64_t index = info[0].As<Napi::Number>().Int64Value();
    if (index >= 0 && static_cast<size_t>(index) < socket_writers_.size()) {
      socket_writers_[index]->Clear(0);
      free_writers_.push_back(static_cast<uint32_t>(index));
    }
    return info.Env().Undefined();
  }

  // flushWriter(), args: fd, writer. Writes what the socket's writer holds
  // with one writev(2), as the write calls do (results[kResultWritten];
  // pending() has what is left). Returns the bytes not written.
  napi_value FlushWriter(napi_env env, napi_value /*unused*/,
                         napi_value /*unused*/) {
    Writer* writer = SocketWriter();
    if (writer == nullptr) return ArgumentsError(env, "flushWriter");
    flushed_ = writer;
    const double remaining = Flush(*writer);
    results_[kResultRemaining] = remaining;
    napi_value out;
    napi_create_double(env, remaining, &out);
    return out;
  }

  // pending([bytes]): what the last write (or flushWriter()) left
  // unwritten, in order, taken out of the writer: all of it, or its first
  // `bytes` (the rest stays queued in a socket's writer). A Buffer (a copy)
  // for bytes of the cork buffer (head, chunk framing, a string body); for
  // the rest of a Buffer body, [tag, bytes of it not written yet]: that
  // memory is the caller's (`tag` as args[kArgBodyTag] named it), and lib/
  // slices it without a copy.
  Napi::Value Pending(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Writer& writer = *flushed_;
    const bool all = info.Length() == 0 || !info[0].IsNumber();
    size_t limit =
        all ? writer.queued_bytes()
            : static_cast<size_t>(info[0].As<Napi::Number>().Int64Value());
    if (limit > writer.queued_bytes()) limit = writer.queued_bytes();
    Napi::Array parts = Napi::Array::New(env);
    size_t left = limit;
    for (size_t i = 0; i < writer.pending_count() && left != 0; i++) {
      const Writer::Part part = writer.pending(i);
      const size_t n = part.length < left ? part.length : left;
      left -= n;
      if (part.external) {
        Napi::Array rest = Napi::Array::New(env, 2);
        rest.Set(0u, static_cast<double>(part.tag));
        rest.Set(1u, static_cast<double>(part.length));
        if (n != part.length) rest.Set(2u, static_cast<double>(n));
        parts.Set(static_cast<uint32_t>(i), rest);
      } else {
        parts.Set(static_cast<uint32_t>(i),
                  Napi::Buffer<uint8_t>::Copy(env, part.data, n));
      }
    }
    writer.Consume(limit);
    if (writer.pending_count() == 0) writer.Clear(KeepBytes(writer));
    return parts;
  }

  // clockSecond(): the second of the clock the Date field reads
  // (DateCache::CurrentSecond()), for lib/write-head.js's kept head. A
  // test's fake timers replace Date.now, even before the package loads, but
  // not this clock; Node's Date field and the addon's read this clock too.
  napi_value ClockSecond(napi_env env, napi_value /*unused*/,
                         napi_value /*unused*/) {
    napi_value out = nullptr;
    napi_create_int64(env, DateCache::CurrentSecond(), &out);
    return out;
  }

  // formatDate(unixSeconds): the IMF-fixdate head.cc writes (for tests).
  Napi::Value FormatDate(const Napi::CallbackInfo& info) {
    char text[DateCache::kLength + 1];
    DateCache::Format(info[0].As<Napi::Number>().Int64Value(), text);
    return Napi::String::New(info.Env(), text, DateCache::kLength);
  }

  // The shared path of writeResponse() and writeTemplate(): the body into
  // the cork buffer (its length decides Content-Length), then the head from
  // `render` (status line and the caller's fields), completed by
  // FinishResponseHead(), then one writev(2). `ascii`: the caller's part of
  // the head is ASCII (what FinishResponseHead() adds always is), so its
  // UTF-8 form is the same bytes.
  template <typename Render>
  napi_value RenderAndWrite(napi_env env, napi_value data, bool ascii,
                            Render render) {
    Writer& writer = Begin();
    HeadBuffer& cork = writer.cork();
    const size_t start = cork.size();
    const uint32_t state_bits = static_cast<uint32_t>(args_[kArgStateBits]);
    const uint32_t body_flags = static_cast<uint32_t>(args_[kArgBodyFlags]);
    const size_t units = static_cast<size_t>(args_[kArgBodyUnits]);
    const MessageState state = StateFromBits(
        state_bits, static_cast<int64_t>(args_[kArgKeepAliveSeconds]),
        static_cast<int64_t>(args_[kArgMaxRequests]));
    Body body;
    if (state.has_body) {
      if (!LoadBody(writer, env, data, body_flags, units, &body)) {
        cork.Truncate(start);
        return BodyError(env);
      }
    } else {
      body.length = UnsentBodyLength(env, data, body_flags, units);
    }
    const size_t head_start = cork.size();
    const FieldsResult fields = render(&cork);
    const ResponseHead r =
        fields.valid
            ? FinishResponseHead(&cork, fields.fields, state,
                                 (state_bits & kContentLengthAsField) != 0,
                                 body.length, &date_)
            : ResponseHead{kStepAsideInvalid, 0, false};
    if (r.step_aside != kStepAsideNone) {
      cork.Truncate(start);
      return SteppedAside(r.step_aside);
    }
    const size_t head_length = cork.size() - head_start;
    napi_value header;
    napi_create_string_latin1(
        env, reinterpret_cast<const char*>(cork.data() + head_start),
        head_length, &header);
    // A UTF-8 body: the head goes out UTF-8 encoded, as Node sends
    // `_header + chunk`.
    size_t head_at = head_start;
    size_t head_bytes = head_length;
    if ((body_flags & kHeadUtf8) != 0 && !ascii) {
      const size_t end = cork.size();
      if (AppendLatin1AsUtf8(&cork, cork.data() + head_start, head_length)) {
        head_at = end;
        head_bytes = cork.size() - end;
      }
    }
    const size_t queued = writer.queued_bytes();
    writer.SendCopied(head_at, head_bytes);
    if (state.has_body) SendBody(writer, body, false);
    End(writer, queued);
    results_[kResultReason] = kStepAsideNone;
    results_[kResultBits] = r.result_bits;
    results_[kResultBodyLength] = static_cast<double>(body.length);
    results_[kResultContentLength] =
        r.content_length_added ? static_cast<double>(body.length)
                               : static_cast<double>(fields.content_length);
    return header;
  }

  // The writer a write call renders into: the environment's, emptied, for
  // a write made now (args[kArgWriter] < 0), or a socket's, whose batch it
  // joins (lib/pipeline.js).
  Writer& Begin() {
    Writer* socket_writer = SocketWriter();
    if (socket_writer != nullptr) return *socket_writer;
    writer_.Clear();
    return writer_;
  }

  // What a writer's cork buffer keeps once empty: the environment's one
  // writer keeps what a large response grew it to (up to 1 MiB); a
  // socket's, one of many, what a few heads need.
  size_t KeepBytes(const Writer& writer) const {
    return &writer == &writer_ ? HeadBuffer::kKeepBytes : kSocketKeepBytes;
  }
  static constexpr size_t kSocketKeepBytes = 16 << 10;

  Writer* SocketWriter() {
    const double index = args_[kArgWriter];
    if (!(index >= 0) || index >= static_cast<double>(socket_writers_.size()))
      return nullptr;
    return socket_writers_[static_cast<size_t>(index)].get();
  }

  // After a write call queued its bytes (`queued`: what the writer held
  // before): the environment's writer writes them now (Flush()); a
  // socket's keeps them. results[kResultRemaining]: the bytes not written
  // (a socket's writer: the bytes this call added); returns it.
  double End(Writer& writer, size_t queued) {
    double remaining;
    if (&writer == &writer_) {
      flushed_ = &writer_;
      remaining = Flush(writer_);
    } else {
      results_[kResultWritten] = 0;
      remaining = static_cast<double>(writer.queued_bytes() - queued);
    }
    results_[kResultRemaining] = remaining;
    return remaining;
  }

  // Encodes a string body into the cork buffer, or references a Buffer's.
  bool LoadBody(Writer& writer, napi_env env, napi_value data,
                uint32_t body_flags, size_t units, Body* out) {
    HeadBuffer& cork = writer.cork();
    switch (body_flags & kBodyKindMask) {
      case kBodyUtf8:
      case kBodyLatin1: {
        const size_t at = cork.size();
        if ((body_flags & kBodyEncoded) != 0) {
          if (!AppendEncoded(env, data, &cork)) return false;
        } else if (!AppendString(env, data,
                                 (body_flags & kBodyKindMask) == kBodyUtf8,
                                 units, &cork))
          return false;
        *out = {nullptr, at, cork.size() - at};
        return true;
      }
      case kBodyBytes: {
        const uint8_t* bytes = nullptr;
        size_t length = 0;
        if (!Uint8ArrayBytes(env, data, &bytes, &length)) return false;
        *out = {bytes, 0, length, static_cast<uint32_t>(args_[kArgBodyTag])};
        return true;
      }
      default:
        *out = {};
        return true;
    }
  }

  // Byte length of a body that is not sent (HEAD, 204, 304): Node still
  // sets `_contentLength` to it.
  static size_t UnsentBodyLength(napi_env env, napi_value data,
                                 uint32_t body_flags, size_t units) {
    size_t n = 0;
    switch (body_flags & kBodyKindMask) {
      case kBodyUtf8:
        if ((body_flags & kBodyEncoded) != 0) {
          const uint8_t* bytes = nullptr;
          return Uint8ArrayBytes(env, data, &bytes, &n) ? n : 0;
        }
        napi_get_value_string_utf8(env, data, nullptr, 0, &n);
        return n;
      case kBodyLatin1:
        return units;
      case kBodyBytes: {
        const uint8_t* bytes = nullptr;
        return Uint8ArrayBytes(env, data, &bytes, &n) ? n : 0;
      }
      default:
        return 0;
    }
  }

  // Queues the body after the head, framed as one chunk when `chunked`
  // (an empty body: the last chunk alone).
  void SendBody(Writer& writer, const Body& body, bool chunked) {
    HeadBuffer& cork = writer.cork();
    if (chunked) {
      const size_t at = cork.size();
      if (body.length == 0) {
        cork.AppendRaw(kLastChunk);
        writer.SendCopied(at, kLastChunk.size());
        return;
      }
      writer.SendCopied(at, AppendChunkSizeLine(&cork, body.length));
    }
    if (body.external != nullptr) {
      writer.SendExternal(body.external, body.length, body.tag);
    } else {
      writer.SendCopied(body.offset, body.length);
    }
    if (chunked) {
      const size_t at = cork.size();
      cork.AppendRaw(kChunkEnd);
      writer.SendCopied(at, kChunkEnd.size());
    }
  }

  // One writev(2) of what is queued. results[kResultWritten]: the bytes
  // written, or -errno of a failure other than EAGAIN (the socket reports
  // some errors only once, ECONNRESET, and lib/ makes the socket's next
  // write fail with it, as libuv would have reported it to Node). Returns
  // the bytes not written; they stay queued for pending(). A negative fd
  // writes nothing: everything stays for pending().
  double Flush(Writer& writer) {
    const int fd = static_cast<int>(args_[kArgFd]);
    if (fd < 0) {  // lib/ hands it all to socket.write()
      results_[kResultWritten] = 0;
      return static_cast<double>(writer.queued_bytes());
    }
    const Writer::FlushResult r = writer.Flush(fd);
    if (r.total != 0) {  // a writev(2) was made
      writev_calls_ += 1;
      writev_bytes_ += static_cast<double>(r.written);
    }
    results_[kResultWritten] = r.error != 0 ? -static_cast<double>(r.error)
                                            : static_cast<double>(r.written);
    if (writer.pending_count() == 0) writer.Clear(KeepBytes(writer));
    return static_cast<double>(r.total - r.written);
  }

  // Reads a JavaScript string as latin1 bytes into text_ through units_
  // (UTF-16). False when a character above U+00FF is in it: no latin1 byte
  // says it, and Node's checks reject it in a reason phrase, a field-name
  // or a field-value (Node's own path judges it).
  bool ReadLatin1(napi_env env, napi_value v) {
    size_t n = 0;
    if (napi_get_value_string_utf16(env, v, nullptr, 0, &n) != napi_ok)
      return false;
    units_.resize(n + 1);
    size_t copied = 0;
    if (napi_get_value_string_utf16(env, v, &units_[0], n + 1, &copied) !=
        napi_ok)
      return false;
    const size_t count = copied;  // a local whose address no store can alias
    text_.resize(count);
    const char16_t* __restrict from = units_.data();
    char* __restrict to = &text_[0];
    char16_t seen = 0;
    for (size_t i = 0; i < count; i++) {
      seen |= from[i];
      to[i] = static_cast<char>(from[i]);
    }
    text_ascii_ = seen < 0x80;
    return seen <= 0xFF;
  }

  // ReadLatin1() for a text that is most often ASCII (a request's method,
  // target and fields): read once as UTF-8, which for ASCII is its latin1
  // bytes; a text with a byte >= 0x80 in that reading is read again by
  // ReadLatin1().
  bool ReadAsciiOrLatin1(napi_env env, napi_value v) {
    size_t units = 0;
    if (napi_get_value_string_utf16(env, v, nullptr, 0, &units) != napi_ok)
      return false;
    text_.resize(units + 1);
    size_t n = 0;
    if (napi_get_value_string_utf8(env, v, &text_[0], units + 1, &n) != napi_ok)
      return false;
    // Every byte below 0x80 and `units` of them: every character was ASCII
    // (a character >= 0x80 writes a byte >= 0x80, or does not fit).
    bool ascii = n == units;
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    size_t i = 0;
    for (; ascii && i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, text_.data() + i, sizeof(w));
      ascii = (w & kHigh) == 0;
    }
    for (; ascii && i < n; i++) ascii = static_cast<uint8_t>(text_[i]) < 0x80;
    if (!ascii) return ReadLatin1(env, v);
    text_.resize(n);
    text_ascii_ = true;
    return true;
  }

  napi_value SteppedAside(StepAside reason) {
    results_[kResultReason] = reason;
    return nullptr;
  }

  static napi_value ArgumentsError(napi_env env, const char* call) {
    const std::string message =
        std::string("fast-response: ") + call + "() arguments";
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message.c_str());
    return nullptr;
  }

  static napi_value BodyError(napi_env env) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE",
                          "fast-response: body must be a string or Uint8Array");
    return nullptr;
  }

  // The environment's writer, for a response written at once, and the
  // writers of sockets with a batch (openWriter()); `flushed_`: the one
  // whose rest pending() gives.
  Writer writer_;
  // AppendString()'s copy of a string read as UTF-16, kept between calls
  // up to kKeptUtf16Units.
  std::vector<char16_t> utf16_;
  static constexpr size_t kKeptUtf16Units = 64 * 1024;
  std::vector<std::unique_ptr<Writer>> socket_writers_;
  std::vector<uint32_t> free_writers_;
  Writer* flushed_ = &writer_;
  DateCache date_;
  // A reason phrase and fields as read from JavaScript (ReadLatin1()).
  std::u16string units_;
  std::string text_;
  bool text_ascii_ = true;  // text_ has no byte >= 0x80
  // The Float64Arrays shared with lib/ (layout.h kResult*, kArg*).
  double* results_ = nullptr;
  double writev_calls_ = 0;  // writev(2) calls made by Flush()
  double writev_bytes_ = 0;  // and the bytes they took
  double* args_ = nullptr;
  Napi::Reference<Napi::Float64Array> results_ref_;
  Napi::Reference<Napi::Float64Array> args_ref_;
};

}  // namespace
}  // namespace fast_response

static Napi::Object InitFastResponse(Napi::Env env, Napi::Object exports) {
  return fast_response::FastResponse::Init(env, exports);
}

NODE_API_MODULE(NODE_GYP_MODULE_NAME, InitFastResponse)
