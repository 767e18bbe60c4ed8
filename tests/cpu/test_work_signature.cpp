// The work signature (profiler/model/work_signature.h) on synthetic CUPTI records: which work of a call
// is ordered between the start and end events on the handed stream, the refusal texts, graph
// mode's comparison, and measure() refusing before any sample.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "bench/core/fixture_json.h"
#include "bench/core/fixture_records.h"
#include "bench/core/measure.h"
#include "profiler/model/profiler.h"
#include "profiler/model/work_signature.h"

namespace xb {
namespace {

constexpr std::uint32_t kHanded = 13, kLegacy = 7, kPerThread = 16, kSide = 14, kSide2 = 15;

/// Builds the records CUPTI delivers for one probed call, in enqueue order (see the lab probe's
/// output on the H200, results/h200/user-patterns-2026-12-04: CUDA_EVENT records carry the stream
/// and cudaEventSyncId, SYNCHRONIZATION records of type 2 the waiting stream and the same id).
struct Calls {
  ProbeRecords p;
  std::uint32_t corr = 100;
  std::uint64_t sync = 1;
  std::int64_t clock = 5000;
  std::uint32_t tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));

  Calls() { p.available = true; }
  WorkSignature derive(std::int64_t from, std::int64_t to, HandedStream handed = {}) {
    ProbeRecords q = p;
    q.thread_id = tid;
    q.window_start_ns = from;
    q.window_end_ns = to;
    return derive_work_signature(q, handed);
  }
  std::uint64_t record(std::uint32_t stream, std::uint32_t thread = 0) {
    RawRecord api;
    api.kind = RawKind::Runtime;
    api.name = "cudaEventRecord";
    api.correlation_id = ++corr;
    api.thread_id = thread == 0 ? tid : thread;
    api.start_ns = clock += 10;
    api.end_ns = clock += 10;
    p.records.push_back(api);
    p.event_records.push_back(EventRecordOp{corr, stream, sync});
    return sync++;
  }
  void wait(std::uint32_t stream, std::uint64_t sync_id) {
    RawRecord s;
    s.kind = RawKind::Synchronization;
    s.sync_type = 2;
    s.correlation_id = ++corr;
    s.stream_id = stream;
    s.event_sync_id = sync_id;
    p.records.push_back(s);
  }
  void device(RawKind kind, std::uint32_t stream, const std::string& name = "_Z6kernelPf", std::uint64_t bytes = 0,
              std::uint32_t copy_kind = 0) {
    RawRecord k;
    k.kind = kind;
    k.name = kind == RawKind::Kernel ? name : "";
    k.correlation_id = ++corr;
    k.stream_id = stream;
    k.bytes = bytes;
    k.copy_kind = copy_kind;
    k.start_ns = clock += 10;
    k.end_ns = clock += 1000;
    p.records.push_back(k);
  }
  void kernel(std::uint32_t stream, const std::string& name = "_Z6kernelPf") { device(RawKind::Kernel, stream, name); }
  void begin() {
    record(kHanded);
    record(kLegacy);
    record(kPerThread);
  }
  WorkSignature end(HandedStream handed = {}) {
    record(kHanded);
    return derive(0, clock + 1, handed);
  }
};

TEST(WorkSignature, WorkOnTheHandedStreamIsCovered) {
  Calls c;
  c.begin();
  c.kernel(kHanded);
  c.device(RawKind::Memcpy, kHanded, "", 4, 2);
  const WorkSignature s = c.end();
  ASSERT_TRUE(s.recorded) << s.why;
  EXPECT_TRUE(s.covered());
  EXPECT_EQ(s.handed_stream_id, kHanded);
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].role, StreamRole::Handed);
  EXPECT_EQ(s.items[1].name, "Memcpy DtoH (Device -> Host)");
  EXPECT_EQ(s.streams, 1);
  EXPECT_EQ(s.summary(), "1 kernel, 1 memcpy on the handed stream; all of it between the events");
  EXPECT_EQ(work_refusal(s), "");
}

TEST(WorkSignature, StreamOrderedAllocationsAreCounted) {
  Calls c;
  c.begin();
  for (const char* api : {"cudaMallocAsync", "cudaFreeAsync"}) {
    RawRecord r;
    r.kind = RawKind::Runtime;
    r.name = api;
    r.correlation_id = ++c.corr;
    r.thread_id = c.tid;
    r.start_ns = c.clock += 10;
    c.p.records.push_back(r);
  }
  c.kernel(kHanded);
  const WorkSignature s = c.end();
  EXPECT_EQ(s.stream_ordered_allocations, 2);
  EXPECT_TRUE(s.covered());
  EXPECT_NE(s.summary().find("2 stream-ordered allocations"), std::string::npos) << s.summary();
}

TEST(WorkSignature, LegacyDefaultStreamIsRefusedBesideANonBlockingHandedStream) {
  Calls c;
  c.begin();
  c.kernel(kHanded);
  c.kernel(kLegacy, "_Z5strayPf");
  const WorkSignature s = c.end();
  ASSERT_TRUE(s.recorded);
  EXPECT_FALSE(s.covered());
  ASSERT_EQ(s.uncovered().size(), 1u);
  EXPECT_EQ(s.uncovered()[0]->role, StreamRole::LegacyDefault);
  const std::string why = work_refusal(s);
  EXPECT_EQ(why.rfind("refused: ", 0), 0u) << why;
  EXPECT_NE(
      why.find("kernel 'stray(float*)' on the legacy default stream (stream 7) does not wait for the handed stream and "
               "is not joined back"),
      std::string::npos)
      << why;
  EXPECT_NE(why.find("(stream 13)"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(WorkSignature, LegacyDefaultStreamIsOrderedWithABlockingOrLegacyHandedStream) {
  for (const HandedStream h : {HandedStream{false, true}, HandedStream{true, true}}) {
    Calls c;
    c.begin();
    c.kernel(kLegacy);
    c.device(RawKind::Memset, kLegacy, "", 64);
    const WorkSignature s = c.end(h);
    EXPECT_TRUE(s.covered()) << s.summary();
  }
  // Another stream beside a legacy handed stream: ordered implicitly only if it is blocking, which
  // the records cannot show: refused, saying so.
  Calls other;
  other.begin();
  other.kernel(kSide);
  const WorkSignature o = other.end(HandedStream{true, true});
  ASSERT_FALSE(o.covered());
  EXPECT_NE(work_refusal(o).find("the records do not say whether it is"), std::string::npos) << work_refusal(o);
  // The per-thread default stream synchronizes with the legacy stream, not with a blocking stream.
  Calls legacy;
  legacy.begin();
  legacy.kernel(kPerThread);
  EXPECT_TRUE(legacy.end(HandedStream{true, true}).covered());
  Calls blocking;
  blocking.begin();
  blocking.kernel(kPerThread);
  const WorkSignature s = blocking.end(HandedStream{false, true});
  ASSERT_FALSE(s.covered());
  EXPECT_NE(work_refusal(s).find("per-thread default stream"), std::string::npos);
}

TEST(WorkSignature, ForkAndJoinIsCovered) {
  Calls c;
  c.begin();
  const auto fork = c.record(kHanded);
  c.wait(kSide, fork);
  c.kernel(kSide);
  c.kernel(kHanded);
  const auto join = c.record(kSide);
  c.wait(kHanded, join);
  const WorkSignature s = c.end();
  EXPECT_TRUE(s.covered());
  EXPECT_EQ(s.streams, 2);
  EXPECT_EQ(s.cross_stream_waits, 2);
  EXPECT_EQ(s.items[0].role, StreamRole::Other);
  EXPECT_EQ(s.summary(), "2 kernels on 2 streams, 2 cross-stream waits; all of it between the events");
}

TEST(WorkSignature, AChainOfStreamsIsFollowed) {
  // handed -> side -> side2 -> handed: each wait passes the order on.
  Calls c;
  c.begin();
  c.wait(kSide, c.record(kHanded));
  c.kernel(kSide);
  c.wait(kSide2, c.record(kSide));
  c.kernel(kSide2);
  c.wait(kHanded, c.record(kSide2));
  EXPECT_TRUE(c.end().covered());
}

TEST(WorkSignature, AnUnjoinedSideStreamIsNotJoinedBack) {
  Calls c;
  c.begin();
  c.wait(kSide, c.record(kHanded));
  c.kernel(kSide, "_Z4sidePf");
  const WorkSignature s = c.end();
  ASSERT_FALSE(s.covered());
  EXPECT_TRUE(s.items[0].after_start);
  EXPECT_FALSE(s.items[0].before_end);
  const std::string why = work_refusal(s);
  EXPECT_NE(why.find("kernel 'side(float*)' on another stream (stream 14) is not joined back"), std::string::npos)
      << why;
}

TEST(WorkSignature, ASideStreamJoinedButNeverForkedDoesNotWait) {
  Calls c;
  c.begin();
  c.kernel(kSide);
  c.wait(kHanded, c.record(kSide));
  const WorkSignature s = c.end();
  ASSERT_FALSE(s.covered());
  EXPECT_FALSE(s.items[0].after_start);
  EXPECT_TRUE(s.items[0].before_end);
  EXPECT_NE(work_refusal(s).find("does not wait for the handed stream (it can run before the start event)"),
            std::string::npos);
}

TEST(WorkSignature, AWaitForWorkAfterTheJoinDoesNotCoverIt) {
  // The handed stream waits for the side stream's first record only; the second kernel comes after.
  Calls c;
  c.begin();
  c.wait(kSide, c.record(kHanded));
  c.kernel(kSide);
  const auto join = c.record(kSide);
  c.kernel(kSide, "_Z5later");
  c.wait(kHanded, join);
  const WorkSignature s = c.end();
  ASSERT_EQ(s.uncovered().size(), 1u);
  EXPECT_EQ(s.uncovered()[0]->name, "_Z5later");
}

TEST(WorkSignature, AWaitForAnEventRecordedBeforeTheCallOrdersNothing) {
  Calls c;
  const auto old = c.record(kHanded);  // before the probe window
  const std::int64_t window = c.clock + 1;
  c.begin();
  c.wait(kSide, old);
  c.kernel(kSide);
  c.wait(kHanded, c.record(kSide));
  c.record(kHanded);
  const WorkSignature s = c.derive(window, c.clock + 1);
  ASSERT_TRUE(s.recorded) << s.why;
  EXPECT_FALSE(s.covered());
  EXPECT_EQ(s.cross_stream_waits, 1);
}

TEST(WorkSignature, AnotherThreadsEventRecordsAreNotMarkers) {
  Calls c;
  c.record(kSide, c.tid + 1);  // another thread, inside the window
  c.begin();
  c.kernel(kHanded);
  c.record(kSide2, c.tid + 1);
  const WorkSignature s = c.end();
  ASSERT_TRUE(s.recorded) << s.why;
  EXPECT_EQ(s.handed_stream_id, kHanded);
  EXPECT_TRUE(s.covered());
}

TEST(WorkSignature, WhatCannotBeJudgedSaysWhy) {
  ProbeRecords none;
  none.why = "this activity source records no device activity (event-only mode)";
  const WorkSignature a = derive_work_signature(none, {});
  EXPECT_FALSE(a.recorded);
  EXPECT_EQ(a.why, none.why);
  EXPECT_EQ(work_refusal(a), "");  // not judged: never refused
  Calls c;
  c.record(kHanded);
  c.kernel(kHanded);
  c.record(kHanded);  // two markers only
  const WorkSignature b = c.derive(0, c.clock + 1);
  EXPECT_FALSE(b.recorded);
  EXPECT_NE(b.why.find("marker events were not recorded"), std::string::npos);
  EXPECT_EQ(b.summary().rfind("not recorded: ", 0), 0u);
}

TEST(WorkSignature, GraphModeComparesTheReplayWithTheCalls) {
  Calls eager;
  eager.begin();
  eager.kernel(kHanded);
  eager.device(RawKind::Memcpy, kHanded, "", 4, 2);
  const WorkSignature one = eager.end();
  Calls same;
  same.begin();
  for (int i = 0; i < 3; ++i) {
    same.kernel(kHanded);
    same.device(RawKind::Memcpy, kHanded, "", 4, 2);
  }
  EXPECT_EQ(graph_refusal(one, 3, same.end()), "");
  Calls lacking;  // the readback ran at capture time: only the kernels were captured
  lacking.begin();
  for (int i = 0; i < 3; ++i) lacking.kernel(kHanded);
  const std::string why = graph_refusal(one, 3, lacking.end());
  EXPECT_EQ(why.rfind("refused in graph mode: ", 0), 0u) << why;
  EXPECT_NE(why.find("the graph lacks Memcpy DtoH (Device -> Host) of 4 B x3"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(WorkSignature, RoundTripsThroughTheFixtureJson) {
  Calls c;
  c.begin();
  c.kernel(kHanded);
  c.kernel(kLegacy);
  FixtureInfo f;
  f.name = "k/fp32/64";
  f.op = "k";
  f.dtype = "fp32";
  f.size = 64;
  f.work = c.end();
  f.work.stream_ordered_allocations = 2;
  f.work.probe_s = 0.0025;
  f.error = work_refusal(f.work);
  RawSession raw;
  raw.fixtures.push_back(fixture_block(f));
  const std::vector<FixtureInfo> back = read_fixtures(raw);
  ASSERT_EQ(back.size(), 1u);
  const WorkSignature& s = back[0].work;
  ASSERT_TRUE(s.recorded);
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[1].role, StreamRole::LegacyDefault);
  EXPECT_FALSE(s.items[1].covered());
  EXPECT_EQ(work_refusal(s), f.error);
  EXPECT_EQ(s.stream_ordered_allocations, 2);
  EXPECT_DOUBLE_EQ(s.probe_s, 0.0025);
  const auto j = fixture_json(back[0]);
  EXPECT_EQ(j["work"]["covered"], false);
  EXPECT_EQ(j["work"]["items"][1]["where"], "legacy default stream");
  // A fixture recorded before the probe reads back "not recorded" and is written without "work".
  FixtureInfo old = f;
  old.work = WorkSignature{};
  old.error.clear();
  RawSession raw_old;
  raw_old.fixtures.push_back(fixture_block(old));
  const FixtureInfo back_old = read_fixtures(raw_old).at(0);
  EXPECT_FALSE(back_old.work.recorded);
  EXPECT_FALSE(fixture_json(back_old).contains("work"));
}

/// An activity source whose probe returns what the device below recorded into `calls`.
class ProbeSource : public ActivitySource {
 public:
  explicit ProbeSource(Calls& c) : calls(c) {}
  Calls& calls;
  void start() override {}
  std::vector<RawRecord> stop() override { return {}; }
  std::uint64_t dropped_records() const override { return 0; }
  std::int64_t now_ns() const override { return calls.clock; }
  void push_external_id(std::uint64_t) override {}
  void pop_external_id() override {}
  void describe(SessionMeta&) const override {}
  bool can_probe() const override { return true; }
  void begin_probe() override { calls.p.records.clear(), calls.p.event_records.clear(); }
  ProbeRecords end_probe() override { return calls.p; }
};

/// A device whose samples are counted and whose probe markers go into `calls`.
class ProbeDevice : public SampleDevice {
 public:
  explicit ProbeDevice(Calls& c) : calls(c) {}
  Calls& calls;
  int starts = 0;
  bool blocking() const override { return false; }
  void hold() override {}
  void flush_l2() override {}
  void record_start() override { ++starts; }
  void record_stop() override {}
  void delay(std::int64_t) override {}
  std::int64_t release_and_wait_ns() override { return 1000; }
  void release() noexcept override {}
  void synchronize() override {}
  void abandon() noexcept override {}
  void probe_begin() override { calls.begin(); }
  void probe_end() override { calls.record(kHanded); }
};

TEST(ActivityBuffers, PastTheLargeBuffersSmallerOnesThenNone) {
  // A launch that starts a host thread per call asks CUPTI for one buffer per thread.
  EXPECT_EQ(activity_buffer_bytes(0, 8u << 20, 256, kOverflowBuffers), 8u << 20);
  EXPECT_EQ(activity_buffer_bytes(255, 8u << 20, 256, kOverflowBuffers), 8u << 20);
  EXPECT_EQ(activity_buffer_bytes(256, 8u << 20, 256, kOverflowBuffers), kOverflowBufferBytes);
  EXPECT_EQ(activity_buffer_bytes(256 + kOverflowBuffers - 1, 8u << 20, 256, kOverflowBuffers), kOverflowBufferBytes);
  EXPECT_EQ(activity_buffer_bytes(256 + kOverflowBuffers, 8u << 20, 256, kOverflowBuffers), 0u);
  EXPECT_EQ(activity_buffer_bytes(1, 4096, 1, 0), 0u);  // the tests' tiny limit still drops
}

TEST(WorkSignature, MeasureRefusesBeforeAnySample) {
  Calls c;
  Profiler prof(std::make_unique<ProbeSource>(c));
  prof.start();
  ProbeDevice dev(c);
  MeasureConfig cfg;
  cfg.schedule = Schedule{0, 0, 1};
  double t = 0;
  cfg.now = [&t] { return t += 0.01; };
  const std::function<void()> stray = [&c] { c.kernel(kLegacy); };
  try {
    measure({stray}, prof, dev, "stray/fp32/64", "xb::stray", cfg);
    FAIL() << "not refused";
  } catch (const WorkRefused& r) {
    EXPECT_EQ(std::string(r.what()).rfind("refused: ", 0), 0u);
    EXPECT_TRUE(r.work.recorded);
    EXPECT_FALSE(r.work.covered());
  }
  EXPECT_EQ(dev.starts, 0);  // no sample was timed
  // On the handed stream: probed, recorded, sampled; --no-work-signature: not probed, said so.
  const std::function<void()> good = [&c] { c.kernel(kHanded); };
  const Measurement m = measure({good}, prof, dev, "good/fp32/64", "xb::good", cfg);
  EXPECT_TRUE(m.work.covered());
  EXPECT_GT(dev.starts, 0);
  cfg.work_signature = false;
  EXPECT_EQ(measure({stray}, prof, dev, "stray/fp32/64", "xb::stray", cfg).work.why,
            "not probed (--no-work-signature)");
}

}  // namespace
}  // namespace xb
