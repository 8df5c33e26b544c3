// src/socket_write: one writev(2), bytes written or -errno, never -EINTR.
// Over socketpair(2) and loopback TCP; SIGPIPE is ignored, as Node does.
#include "socket_write.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace fast_response {
namespace {

class SocketWriteTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { signal(SIGPIPE, SIG_IGN); }

  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
  }
  void TearDown() override {
    for (int& fd : fds_) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }

  int writer() const { return fds_[0]; }
  int reader() const { return fds_[1]; }
  void CloseReader() {
    close(fds_[1]);
    fds_[1] = -1;
  }

  // What libuv does to every socket.
  static void SetNonBlocking(int fd) {
    ASSERT_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
  }
  static void SetSmallBuffers(int writer, int reader) {
    const int size = 4096;  // the kernel's minimum is applied
    ASSERT_EQ(setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)),
              0);
    ASSERT_EQ(setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)),
              0);
  }

  // Reads exactly `n` bytes (blocking).
  static std::string ReadAll(int fd, size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
      const ssize_t r = read(fd, &out[got], n - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    out.resize(got);
    return out;
  }

  int fds_[2] = {-1, -1};
};

iovec Iov(const std::string& s) {
  return iovec{const_cast<char*>(s.data()), s.size()};
}

TEST_F(SocketWriteTest, FullWriteOfHeadAndBody) {
  const std::string head =
      "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\n";
  const std::string body = "hello";
  const iovec iov[2] = {Iov(head), Iov(body)};
  SetNonBlocking(writer());
  EXPECT_EQ(Writev(writer(), iov, 2),
            static_cast<ssize_t>(head.size() + body.size()));
  EXPECT_EQ(ReadAll(reader(), head.size() + body.size()), head + body);
}

TEST_F(SocketWriteTest, EmptyWriteIsZero) {
  const iovec iov[1] = {{nullptr, 0}};
  EXPECT_EQ(Writev(writer(), iov, 1), 0);
}

TEST_F(SocketWriteTest, PartialWriteWhenThePeerDoesNotRead) {
  SetSmallBuffers(writer(), reader());
  SetNonBlocking(writer());
  const std::string head(100, 'h');
  const std::string body(4 << 20, 'b');  // far more than both buffers hold
  const iovec iov[2] = {Iov(head), Iov(body)};
  const ssize_t n = Writev(writer(), iov, 2);
  ASSERT_GT(n, 0);
  EXPECT_LT(static_cast<size_t>(n), head.size() + body.size());
  // The bytes that went out are the first n, in order.
  const std::string got = ReadAll(reader(), static_cast<size_t>(n));
  EXPECT_EQ(got, (head + body).substr(0, static_cast<size_t>(n)));
}

TEST_F(SocketWriteTest, EagainOnAFullNonBlockingSocket) {
  SetSmallBuffers(writer(), reader());
  SetNonBlocking(writer());
  const std::string chunk(64 << 10, 'x');
  const iovec iov[1] = {Iov(chunk)};
  ssize_t n = 0;
  for (int i = 0; i < 10000; i++) {
    n = Writev(writer(), iov, 1);
    if (n < 0) break;
  }
  EXPECT_EQ(n, -EAGAIN);
  // Still full: nothing written, -EAGAIN again.
  EXPECT_EQ(Writev(writer(), iov, 1), -EAGAIN);
}

TEST_F(SocketWriteTest, EpipeAfterThePeerClosed) {
  CloseReader();
  const std::string data = "HTTP/1.1 200 OK\r\n\r\n";
  const iovec iov[1] = {Iov(data)};
  EXPECT_EQ(Writev(writer(), iov, 1), -EPIPE);  // SIGPIPE ignored
}

TEST_F(SocketWriteTest, EbadfOnAClosedDescriptor) {
  const int fd = dup(writer());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(close(fd), 0);
  const std::string data = "x";
  const iovec iov[1] = {Iov(data)};
  EXPECT_EQ(Writev(fd, iov, 1), -EBADF);
  EXPECT_EQ(Writev(-1, iov, 1), -EBADF);
}

TEST_F(SocketWriteTest, EinvalOnABadIovcnt) {
  const std::string data = "x";
  const iovec iov[1] = {Iov(data)};
  EXPECT_EQ(Writev(writer(), iov, -1), -EINVAL);
}

volatile sig_atomic_t g_signals = 0;
void OnSignal(int) { g_signals = g_signals + 1; }

TEST_F(SocketWriteTest, RetriesWhenInterruptedBySignal) {
  // A blocking writev(2) that a signal handler (installed without
  // SA_RESTART) interrupts before any byte went out fails with EINTR;
  // Writev() tries again instead of reporting it.
  struct sigaction sa = {};
  struct sigaction old = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  g_signals = 0;

  SetSmallBuffers(writer(), reader());
  // Fill the send buffer so that the next blocking write waits.
  SetNonBlocking(writer());
  const std::string fill(64 << 10, 'f');
  const iovec fill_iov[1] = {Iov(fill)};
  size_t filled = 0;
  for (;;) {
    const ssize_t n = Writev(writer(), fill_iov, 1);
    if (n < 0) break;
    filled += static_cast<size_t>(n);
  }
  ASSERT_EQ(fcntl(writer(), F_SETFL, fcntl(writer(), F_GETFL) & ~O_NONBLOCK),
            0);

  const pthread_t main_thread = pthread_self();
  std::atomic<bool> done{false};
  const int reader_fd = reader();
  std::thread helper([&] {
    // Interrupt the blocked write a few times, then drain the socket.
    for (int i = 0; i < 5 && !done; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      pthread_kill(main_thread, SIGUSR1);
    }
    std::vector<char> sink(64 << 10);
    while (!done) {
      pollfd p = {reader_fd, POLLIN, 0};
      if (poll(&p, 1, 10) > 0 && read(reader_fd, sink.data(), sink.size()) <= 0)
        break;
    }
  });

  const std::string data = "after the signals";
  const iovec iov[1] = {Iov(data)};
  const ssize_t n = Writev(writer(), iov, 1);
  done = true;
  helper.join();
  sigaction(SIGUSR1, &old, nullptr);
  // A blocking socket: everything, or the part written before a signal came.
  EXPECT_GT(n, 0);
  EXPECT_LE(n, static_cast<ssize_t>(data.size()));
  EXPECT_GT(filled, 0u);
  EXPECT_GT(g_signals, 0) << "no signal reached the blocked write";
}

// Loopback TCP: a peer that closes with unread data sends RST; the next
// writes fail with ECONNRESET or EPIPE, whichever the kernel reports first.
TEST(SocketWriteTcp, ResetOrPipeAfterThePeerClosed) {
  signal(SIGPIPE, SIG_IGN);
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  close(listener);

  // The client sends a request the server never reads, then closes: RST.
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_EQ(write(client, request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  close(client);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));

  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  const iovec iov[1] = {Iov(response)};
  ssize_t n = 0;
  for (int i = 0; i < 100 && n >= 0; i++) {
    n = Writev(server, iov, 1);
    if (n >= 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(n == -ECONNRESET || n == -EPIPE) << "Writev returned " << n;
  close(server);
}

}  // namespace
}  // namespace fast_response
