// src/writer: the cork buffer and its parts, sent with one writev(2) in send
// order; what the kernel does not take stays pending, the first part cut.
// Over socketpair(2) with O_NONBLOCK (what libuv makes of every socket) and
// a small send buffer; SIGPIPE is ignored, as Node does.
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace fast_response {
namespace {

const uint8_t* U(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

class WriterTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { signal(SIGPIPE, SIG_IGN); }

  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    for (const int fd : fds_) {
      ASSERT_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    }
  }
  void TearDown() override {
    for (int& fd : fds_) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }

  int out() const { return fds_[0]; }
  int in() const { return fds_[1]; }
  void CloseReader() {
    close(fds_[1]);
    fds_[1] = -1;
  }
  void SetSmallBuffers() {
    const int size = 4096;  // the kernel's minimum is applied
    ASSERT_EQ(setsockopt(out(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)), 0);
    ASSERT_EQ(setsockopt(in(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)), 0);
  }
  // Writes until the socket takes nothing more; returns the bytes written.
  size_t FillSocket() {
    const std::string chunk(64 << 10, 'f');
    size_t filled = 0;
    for (;;) {
      const ssize_t n = write(out(), chunk.data(), chunk.size());
      if (n < 0) {
        EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << errno;
        return filled;
      }
      filled += static_cast<size_t>(n);
    }
  }
  // Everything readable now (the reader is non-blocking).
  std::string ReadAvailable() {
    std::string got;
    char buf[64 << 10];
    for (;;) {
      const ssize_t n = read(in(), buf, sizeof(buf));
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }

  int fds_[2] = {-1, -1};
};

// The pending parts, concatenated, and described as "c:<length>" (a range
// of the cork buffer) or "e:<length>" (the caller's memory).
std::string PendingBytes(const Writer& w) {
  std::string out;
  for (size_t i = 0; i < w.pending_count(); i++) {
    const Writer::Part p = w.pending(i);
    out.append(reinterpret_cast<const char*>(p.data), p.length);
  }
  return out;
}
std::string PendingShape(const Writer& w) {
  std::string out;
  for (size_t i = 0; i < w.pending_count(); i++) {
    const Writer::Part p = w.pending(i);
    if (!out.empty()) out += ' ';
    out += (p.external ? "e:" : "c:") + std::to_string(p.length);
  }
  return out;
}

// Appends `s` to the cork buffer; returns its offset there.
size_t Copy(Writer* w, const std::string& s) {
  const size_t at = w->cork().size();
  w->cork().AppendRaw(s);
  return at;
}

TEST_F(WriterTest, CopiedAndExternalPartsInSendOrder) {
  Writer w;
  const std::string head =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string body = "a Buffer body, referenced";
  const std::string size_line = "19\r\n";
  const std::string end = "\r\n0\r\n\r\n";
  const std::string tail = "another external part";
  w.SendCopied(Copy(&w, head), head.size());
  w.SendExternal(U(body), body.size());
  w.SendCopied(Copy(&w, size_line), size_line.size());
  w.SendExternal(U(tail), tail.size());
  w.SendCopied(Copy(&w, end), end.size());
  const std::string all = head + body + size_line + tail + end;
  EXPECT_EQ(w.queued_bytes(), all.size());
  ASSERT_EQ(w.pending_count(), 5u);
  EXPECT_EQ(PendingShape(w), "c:" + std::to_string(head.size()) +
                                 " e:" + std::to_string(body.size()) +
                                 " c:4 e:" + std::to_string(tail.size()) +
                                 " c:7");
  // External parts are the caller's memory itself, not a copy.
  EXPECT_EQ(w.pending(1).data, U(body));
  EXPECT_TRUE(w.pending(1).external);
  EXPECT_EQ(w.pending(0).data, w.cork().data());
  EXPECT_FALSE(w.pending(0).external);
  EXPECT_EQ(PendingBytes(w), all);

  const Writer::FlushResult r = w.Flush(out());
  EXPECT_EQ(r.total, all.size());
  EXPECT_EQ(r.written, all.size());
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(w.pending_count(), 0u);
  EXPECT_EQ(w.queued_bytes(), 0u);
  EXPECT_EQ(ReadAvailable(), all);
}

TEST_F(WriterTest, AdjacentCopiedRangesAreOnePart) {
  Writer w;
  const size_t a = Copy(&w, "HTTP/1.1 200 OK\r\n");
  const size_t b = Copy(&w, "Content-Length: 5\r\n\r\n");
  const size_t c = Copy(&w, "hello");
  w.SendCopied(a, 17);
  w.SendCopied(b, 21);
  w.SendCopied(c, 5);
  EXPECT_EQ(PendingShape(w), "c:43");
  EXPECT_EQ(PendingBytes(w),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  // Nothing merges across an external part, a gap, or backwards.
  const std::string ext = "ext";
  Writer v;
  const size_t x = Copy(&v, "0123456789");
  v.SendCopied(x, 2);  // "01"
  v.SendExternal(U(ext), 3);
  v.SendCopied(x + 2, 2);  // "23": follows "01" in memory, not in the queue
  v.SendCopied(x + 5, 2);  // "56": a gap after "23"
  v.SendCopied(x + 4, 1);  // "4": before "56"
  v.SendCopied(x + 7, 0);  // nothing
  v.SendExternal(U(ext), 0);
  v.SendCopied(x + 5, 3);  // "567": after "4" in memory
  EXPECT_EQ(PendingShape(v), "c:2 e:3 c:2 c:2 c:4");
  EXPECT_EQ(PendingBytes(v),
            "01ext2356"
            "4567");
  EXPECT_EQ(v.queued_bytes(), 13u);
  const Writer::FlushResult r = v.Flush(out());
  EXPECT_EQ(r.written, 13u);
  EXPECT_EQ(ReadAvailable(), "01ext23564567");
}

TEST_F(WriterTest, QueuedRangesSurviveTheCorkGrowing) {
  // Copied parts are ranges of the cork buffer, not pointers into it: the
  // chunk framing appended after the body may move the whole buffer.
  Writer w;
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  w.SendCopied(Copy(&w, head), head.size());
  const uint8_t* before = w.cork().data();
  const std::string body(100000, 'x');
  w.SendCopied(Copy(&w, body), body.size());
  ASSERT_NE(w.cork().data(), before) << "the test's premise: a reallocation";
  EXPECT_EQ(PendingShape(w), "c:" + std::to_string(head.size() + body.size()));
  EXPECT_EQ(w.pending(0).data, w.cork().data());
  EXPECT_TRUE(PendingBytes(w) == head + body);
}

TEST_F(WriterTest, HeadRenderedAfterItsBodyGoesFirst) {
  // src/addon.cc copies a string body into the cork buffer first (its
  // length decides Content-Length), then renders the head after it.
  Writer w;
  const std::string body = "{\"hello\":\"world\"}";
  const size_t body_at = Copy(&w, body);
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Length: 17\r\n"
      "Connection: keep-alive\r\n\r\n";
  const size_t head_at = Copy(&w, head);
  ASSERT_GT(head_at, body_at);
  w.SendCopied(head_at, head.size());
  w.SendCopied(body_at, body.size());
  EXPECT_EQ(PendingShape(w), "c:" + std::to_string(head.size()) + " c:17");
  const Writer::FlushResult r = w.Flush(out());
  EXPECT_EQ(r.written, head.size() + body.size());
  EXPECT_EQ(ReadAvailable(), head + body);
}

TEST_F(WriterTest, ShortWriteLeavesThePendingPartsFirstOneCut) {
  SetSmallBuffers();
  Writer w;
  const std::string head(100, 'h');
  std::string body(4 << 20, 'b');  // far more than the socket holds
  for (size_t i = 0; i < body.size(); i += 4096) body[i] = 'B';
  const std::string end = "\r\n0\r\n\r\n";
  w.SendCopied(Copy(&w, head), head.size());
  w.SendExternal(U(body), body.size());
  w.SendCopied(Copy(&w, end), end.size());
  const std::string all = head + body + end;

  const Writer::FlushResult r = w.Flush(out());
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.total, all.size());
  ASSERT_GT(r.written, head.size()) << "the test's premise: the cut is in "
                                       "the body";
  ASSERT_LT(r.written, head.size() + body.size());
  const size_t into_body = r.written - head.size();
  EXPECT_EQ(w.queued_bytes(), all.size() - r.written);
  // The head is gone, the body cut where the kernel stopped, the end whole.
  ASSERT_EQ(w.pending_count(), 2u);
  EXPECT_TRUE(w.pending(0).external);
  EXPECT_EQ(w.pending(0).data, U(body) + into_body);
  EXPECT_EQ(w.pending(0).length, body.size() - into_body);
  EXPECT_FALSE(w.pending(1).external);
  EXPECT_EQ(w.pending(1).length, end.size());
  EXPECT_TRUE(PendingBytes(w) == all.substr(r.written));

  // What went out is the first `written` bytes; flushing again as the peer
  // reads sends the rest, in order.
  std::string received = ReadAvailable();
  for (int i = 0; i < 100000 && w.pending_count() > 0; i++) {
    const Writer::FlushResult again = w.Flush(out());
    EXPECT_EQ(again.error, 0);
    EXPECT_EQ(again.total, again.written + w.queued_bytes());
    received += ReadAvailable();
  }
  EXPECT_EQ(w.pending_count(), 0u);
  received += ReadAvailable();
  EXPECT_TRUE(received == all) << received.size() << " of " << all.size();
}

TEST_F(WriterTest, ShortWriteCutsACopiedPart) {
  SetSmallBuffers();
  Writer w;
  std::string big(1 << 20, 'c');
  for (size_t i = 0; i < big.size(); i++) big[i] = static_cast<char>(i % 251);
  const std::string ext = "after";
  w.SendCopied(Copy(&w, big), big.size());
  w.SendExternal(U(ext), ext.size());
  const Writer::FlushResult r = w.Flush(out());
  ASSERT_GT(r.written, 0u);
  ASSERT_LT(r.written, big.size());
  ASSERT_EQ(w.pending_count(), 2u);
  EXPECT_FALSE(w.pending(0).external);
  EXPECT_EQ(w.pending(0).data, w.cork().data() + r.written);
  EXPECT_EQ(w.pending(0).length, big.size() - r.written);
  EXPECT_EQ(w.pending(1).data, U(ext));
  EXPECT_EQ(ReadAvailable(), big.substr(0, r.written));
}

TEST_F(WriterTest, FullSocketLeavesEverythingPending) {
  SetSmallBuffers();
  ASSERT_GT(FillSocket(), 0u);
  Writer w;
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  const std::string body = "body";
  w.SendCopied(Copy(&w, head), head.size());
  w.SendExternal(U(body), body.size());
  const std::string shape = PendingShape(w);
  const Writer::FlushResult r = w.Flush(out());
  // EAGAIN is no error: the bytes wait for socket.write().
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.written, 0u);
  EXPECT_EQ(r.total, head.size() + body.size());
  EXPECT_EQ(w.queued_bytes(), head.size() + body.size());
  EXPECT_EQ(PendingShape(w), shape);
  EXPECT_EQ(PendingBytes(w), head + body);
  EXPECT_EQ(w.pending(1).data, U(body));
}

TEST_F(WriterTest, EpipeAfterThePeerClosed) {
  CloseReader();
  Writer w;
  const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
  w.SendCopied(Copy(&w, head), head.size());
  const Writer::FlushResult r = w.Flush(out());  // SIGPIPE ignored
  EXPECT_EQ(r.error, EPIPE);
  EXPECT_EQ(r.written, 0u);
  EXPECT_EQ(r.total, head.size());
  // Nothing was written: nothing is forgotten.
  EXPECT_EQ(w.pending_count(), 1u);
  EXPECT_EQ(w.queued_bytes(), head.size());
}

TEST_F(WriterTest, EbadfOnAClosedDescriptor) {
  Writer w;
  w.SendCopied(Copy(&w, "x"), 1);
  EXPECT_EQ(w.Flush(-1).error, EBADF);
  EXPECT_EQ(w.pending_count(), 1u);
}

TEST_F(WriterTest, NothingQueuedIsNoWrite) {
  Writer w;
  // No writev(2) at all: not even a bad descriptor is noticed.
  const Writer::FlushResult r = w.Flush(-1);
  EXPECT_EQ(r.total, 0u);
  EXPECT_EQ(r.written, 0u);
  EXPECT_EQ(r.error, 0);
  w.cork().AppendRaw("copied but not sent");
  EXPECT_EQ(w.Flush(-1).error, 0);
  EXPECT_EQ(w.queued_bytes(), 0u);
}

TEST_F(WriterTest, AtMost1024PartsPerFlush) {
  // writev(2) takes at most IOV_MAX (1024) parts: the rest stays pending.
  Writer w;
  std::string bytes(1500, '\0');
  for (size_t i = 0; i < bytes.size(); i++)
    bytes[i] = static_cast<char>('a' + i % 26);
  // Alternating one-byte external parts and one-byte cork ranges with a
  // gap between them: nothing merges.
  std::string expected;
  for (size_t i = 0; i < bytes.size(); i++) {
    if (i % 2 == 0) {
      w.SendExternal(U(bytes) + i, 1);
    } else {
      const size_t at = Copy(&w, std::string(1, bytes[i]) + "-");
      w.SendCopied(at, 1);
    }
    expected += bytes[i];
  }
  ASSERT_EQ(w.pending_count(), 1500u);
  const Writer::FlushResult r = w.Flush(out());
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.total, 1500u);
  EXPECT_EQ(r.written, 1024u);
  EXPECT_EQ(w.pending_count(), 1500u - 1024u);
  EXPECT_EQ(w.queued_bytes(), 1500u - 1024u);
  EXPECT_EQ(w.pending(0).data, U(bytes) + 1024);  // part 1024 is external
  EXPECT_EQ(PendingBytes(w), expected.substr(1024));
  EXPECT_EQ(ReadAvailable(), expected.substr(0, 1024));
  const Writer::FlushResult again = w.Flush(out());
  EXPECT_EQ(again.written, 476u);
  EXPECT_EQ(w.pending_count(), 0u);
  EXPECT_EQ(ReadAvailable(), expected.substr(1024));
}

TEST_F(WriterTest, MoreThan1024PartsWithAShortWrite) {
  // 2000 parts of 4 KiB: the kernel takes fewer bytes than the first 1024
  // parts hold; what stays is every part from the cut on, in order.
  SetSmallBuffers();
  Writer w;
  std::string bytes(2000 * 4096, '\0');
  for (size_t i = 0; i < bytes.size(); i++)
    bytes[i] = static_cast<char>(i / 4096 % 251);
  for (size_t i = 0; i < 2000; i++) w.SendExternal(U(bytes) + i * 4096, 4096);
  const Writer::FlushResult r = w.Flush(out());
  ASSERT_GT(r.written, 0u);
  ASSERT_LT(r.written, 1024u * 4096u);
  EXPECT_EQ(w.queued_bytes(), bytes.size() - r.written);
  EXPECT_EQ(w.pending(0).data, U(bytes) + r.written);
  EXPECT_EQ(w.pending_count(), 2000u - r.written / 4096);
  std::string received = ReadAvailable();
  for (int i = 0; i < 1000000 && w.pending_count() > 0; i++) {
    EXPECT_EQ(w.Flush(out()).error, 0);
    received += ReadAvailable();
  }
  received += ReadAvailable();
  EXPECT_TRUE(received == bytes) << received.size();
}

TEST_F(WriterTest, ClearEmptiesAndGivesBackALargeCork) {
  Writer w;
  // A small cork keeps its area from response to response.
  w.SendCopied(Copy(&w, "HTTP/1.1 200 OK\r\n\r\n"), 19);
  const uint8_t* small = w.cork().data();
  w.Clear();
  EXPECT_EQ(w.pending_count(), 0u);
  EXPECT_EQ(w.queued_bytes(), 0u);
  EXPECT_EQ(w.cork().size(), 0u);
  w.cork().AppendRaw("again");
  EXPECT_EQ(w.cork().data(), small);

  // A string body of more than a megabyte: its area is given back.
  const std::string body((1 << 20) + 1, 'b');
  w.Clear();
  w.SendCopied(Copy(&w, body), body.size());
  w.SendExternal(U(body), 10);
  ASSERT_EQ(w.pending_count(), 2u);
  w.Clear();
  EXPECT_EQ(w.pending_count(), 0u);
  EXPECT_EQ(w.queued_bytes(), 0u);
  EXPECT_EQ(w.cork().size(), 0u);
  EXPECT_EQ(w.cork().data(), nullptr);
  EXPECT_EQ(w.Flush(out()).total, 0u);

  // And the writer works as new.
  const std::string head = "HTTP/1.1 204 No Content\r\n\r\n";
  w.SendCopied(Copy(&w, head), head.size());
  EXPECT_EQ(w.Flush(out()).written, head.size());
  EXPECT_EQ(ReadAvailable(), head);
}

}  // namespace
}  // namespace fast_response
