// Google Benchmark microbenchmarks of the addon's head pipeline, the
// functions src/addon.cc calls: nanoseconds per rendered response head and
// bytes/s, with 2, 8 and 32 header fields, string or number values, with or
// without validation. A head is rendered as writeResponse() renders it:
// RenderStatusAndFields() over the NUL-joined text lib/headers.js sends
// ("reason\0name\0value\0..."; a number value is its decimal string there,
// as lib/ joins it), then FinishResponseHead() (Date, Connection,
// Keep-Alive, Content-Length). BM_WriterRound adds the rest of a
// writeResponse(): a string body copied into the Writer's cork buffer, the
// head rendered after it, both queued (SendCopied) and sent with one
// writev(2) to /dev/null (Flush).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "head.h"
#include "layout.h"
#include "message.h"
#include "writer.h"

namespace fast_response {
namespace {

struct Field {
  std::string name;
  std::string value;  // string values
  uint64_t number;    // number values
};

// Realistic names and values: the common ones first, then X-Custom-<i>.
std::vector<Field> MakeFields(int count) {
  static const char* const kNames[] = {"Content-Type",
                                       "Cache-Control",
                                       "ETag",
                                       "Vary",
                                       "X-Request-Id",
                                       "Last-Modified",
                                       "Content-Language",
                                       "X-Powered-By"};
  static const char* const kValues[] = {"application/json; charset=utf-8",
                                        "public, max-age=3600",
                                        "\"33a64df551425fcc55e4d42a148795d9\"",
                                        "Accept-Encoding",
                                        "4f9d7c2e-1b8a-4e3f-9a6d-2c5b8e7f1a0d",
                                        "Wed, 21 Oct 2015 07:28:00 GMT",
                                        "en-US",
                                        "fast-response"};
  std::vector<Field> fields;
  for (int i = 0; i < count; i++) {
    Field f;
    if (i < 8) {
      f.name = kNames[i];
      f.value = kValues[i];
    } else {
      f.name = "X-Custom-Field-" + std::to_string(i);
      f.value = "value-" + std::to_string(i) + "-abcdefghijklmnop";
    }
    f.number = 1000000u + static_cast<uint64_t>(i) * 7919u;
    fields.push_back(std::move(f));
  }
  return fields;
}

// The text lib/headers.js joins: "OK\0name\0value\0...".
std::string JoinedText(const std::vector<Field>& fields, bool numbers) {
  std::string text = std::string("OK") + '\0';
  for (const Field& f : fields) {
    text += f.name + '\0';
    text += (numbers ? std::to_string(f.number) : f.value) + '\0';
  }
  return text;
}

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Node's default server: keep-alive, keepAliveTimeout 5 s, a body, Date.
constexpr uint32_t kStateBits = layout::kSendDate | layout::kShouldKeepAlive |
                                layout::kUseChunkedByDefault |
                                layout::kHasBody | layout::kKeepAliveTimeoutSet;

// Renders the head after what `head` holds; returns its size in bytes, or
// 0 when the fields fail validation or the head steps aside.
size_t RenderHead(HeadBuffer* head, DateCache* date, const std::string& text,
                  uint32_t count, bool validate, uint64_t body_length) {
  const size_t start = head->size();
  const FieldsResult f = RenderStatusAndFields(head, 200, Bytes(text),
                                               text.size(), count, validate);
  if (!f.valid) return 0;
  const ResponseHead r =
      FinishResponseHead(head, f.fields, StateFromBits(kStateBits, 5, 0), false,
                         body_length, date);
  if (r.step_aside != layout::kStepAsideNone) return 0;
  return head->size() - start;
}

// Args: fields, numbers (0: string values, 1: number values), validate.
void BM_RenderHead(benchmark::State& state) {
  const std::vector<Field> fields =
      MakeFields(static_cast<int>(state.range(0)));
  const std::string text = JoinedText(fields, state.range(1) != 0);
  const uint32_t count = static_cast<uint32_t>(fields.size());
  const bool validate = state.range(2) != 0;
  HeadBuffer head;
  DateCache date;
  size_t size = 0;
  for (auto _ : state) {
    head.Clear();
    size = RenderHead(&head, &date, text, count, validate, 64);
    benchmark::DoNotOptimize(head.bytes().data());
    benchmark::ClobberMemory();
  }
  if (size == 0) {
    state.SkipWithError("the head failed validation or stepped aside");
    return;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(size));
  state.counters["head_bytes"] = static_cast<double>(size);
}
BENCHMARK(BM_RenderHead)
    ->ArgNames({"fields", "number", "validate"})
    ->ArgsProduct({{2, 8, 32}, {0, 1}, {0, 1}});

// A whole writeResponse() round without Node-API: Clear(), the string body
// copied into the cork buffer, the head rendered after it, head and body
// queued, one writev(2) to /dev/null. Args: fields, validate.
void BM_WriterRound(benchmark::State& state) {
  const int fd = open("/dev/null", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    state.SkipWithError("cannot open /dev/null");
    return;
  }
  const std::vector<Field> fields =
      MakeFields(static_cast<int>(state.range(0)));
  const std::string text = JoinedText(fields, false);
  const uint32_t count = static_cast<uint32_t>(fields.size());
  const bool validate = state.range(1) != 0;
  const std::string body =
      "{\"id\":42,\"name\":\"fast-response\",\"tags\":[\"http\",\"writev\"]}";
  Writer writer;
  DateCache date;
  size_t sent = 0;
  bool failed = false;
  for (auto _ : state) {
    writer.Clear();
    HeadBuffer& cork = writer.cork();
    cork.AppendRaw(body);
    const size_t head_at = cork.size();
    const size_t head_size =
        RenderHead(&cork, &date, text, count, validate, body.size());
    writer.SendCopied(head_at, head_size);
    writer.SendCopied(0, body.size());
    const Writer::FlushResult r = writer.Flush(fd);
    failed = failed || head_size == 0 || r.error != 0 || r.written != r.total;
    sent = r.written;
  }
  close(fd);
  if (failed) {
    state.SkipWithError("a round failed");
    return;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(sent));
  state.counters["bytes_sent"] = static_cast<double>(sent);
}
BENCHMARK(BM_WriterRound)
    ->ArgNames({"fields", "validate"})
    ->ArgsProduct({{2, 8, 32}, {0, 1}});

// The checks alone, on one typical field-value and field-name.
void BM_IsFieldValue(benchmark::State& state) {
  const std::string value(static_cast<size_t>(state.range(0)), 'a');
  for (auto _ : state) {
    benchmark::DoNotOptimize(IsFieldValue(Bytes(value), value.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
BENCHMARK(BM_IsFieldValue)->Arg(16)->Arg(64)->Arg(1024);

void BM_IsToken(benchmark::State& state) {
  const std::string name = "X-Custom-Field-Name";
  for (auto _ : state) {
    benchmark::DoNotOptimize(IsToken(Bytes(name), name.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(name.size()));
}
BENCHMARK(BM_IsToken);

// The Date field: formatted once a second, a copy otherwise.
void BM_DateCacheNow(benchmark::State& state) {
  DateCache date;
  for (auto _ : state) benchmark::DoNotOptimize(date.Now());
}
BENCHMARK(BM_DateCacheNow);

}  // namespace
}  // namespace fast_response

BENCHMARK_MAIN();
