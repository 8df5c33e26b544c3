// Google Benchmark microbenchmarks of src/head: nanoseconds per rendered
// response head and bytes/s, with 2, 8 and 32 header fields, string or
// number values, with or without validation. A head is rendered the way
// src/addon.cc does it (AppendStatusAndFields, then FinishHead): the status
// line and reason phrase (always checked, as writeHead()), each field's name
// and value appended, checked with IsToken/IsFieldValue when validating,
// MatchField() over each, then Date, Connection, Keep-Alive and
// Content-Length from FinishHead(). Number values are written with
// AppendDecimal(), what a native path for numbers would do (lib/ turns
// numbers into strings today).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "head.h"

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

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Returns the head's size in bytes, or 0 when a field fails validation.
size_t RenderHead(HeadBuffer* head, DateCache* date,
                  const std::vector<Field>& fields, bool numbers,
                  bool validate) {
  static const char kReason[] = "OK";
  head->Clear();
  if (!IsFieldValue(reinterpret_cast<const uint8_t*>(kReason),
                    sizeof(kReason) - 1))
    return 0;
  head->AppendStatusLine(200, reinterpret_cast<const uint8_t*>(kReason),
                         sizeof(kReason) - 1);
  uint32_t flags = 0;
  for (const Field& f : fields) {
    const size_t name_at = head->size();
    head->AppendRaw(Bytes(f.name), f.name.size());
    head->AppendRaw(": ");
    const size_t value_at = head->size();
    if (numbers) {
      head->AppendDecimal(f.number);
    } else {
      head->AppendRaw(Bytes(f.value), f.value.size());
    }
    const size_t value_len = head->size() - value_at;
    const uint8_t* base = head->data();
    if (validate && (!IsToken(base + name_at, f.name.size()) ||
                     !IsFieldValue(base + value_at, value_len))) {
      return 0;
    }
    flags |=
        MatchField(base + name_at, f.name.size(), base + value_at, value_len);
    head->AppendRaw("\r\n");
  }
  MessageState state;
  state.keep_alive_timeout_set = true;  // Node's default keepAliveTimeout
  state.keep_alive_timeout_s = 5;
  state.content_length = 64;
  FinishHead(head, flags, state, date);
  return head->size();
}

// Args: fields, numbers (0: string values, 1: number values), validate.
void BM_RenderHead(benchmark::State& state) {
  const std::vector<Field> fields =
      MakeFields(static_cast<int>(state.range(0)));
  const bool numbers = state.range(1) != 0;
  const bool validate = state.range(2) != 0;
  HeadBuffer head;
  DateCache date;
  size_t size = 0;
  for (auto _ : state) {
    size = RenderHead(&head, &date, fields, numbers, validate);
    benchmark::DoNotOptimize(head.bytes().data());
    benchmark::ClobberMemory();
  }
  if (size == 0) {
    state.SkipWithError("a field failed validation");
    return;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(size));
  state.counters["head_bytes"] = static_cast<double>(size);
}
BENCHMARK(BM_RenderHead)
    ->ArgNames({"fields", "number", "validate"})
    ->ArgsProduct({{2, 8, 32}, {0, 1}, {0, 1}});

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
