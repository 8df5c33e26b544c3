// One writev(2) on a non-blocking file descriptor. Nothing here knows of
// JavaScript or of HTTP.
#ifndef FAST_RESPONSE_SOCKET_WRITE_H_
#define FAST_RESPONSE_SOCKET_WRITE_H_

#include <sys/types.h>
#include <sys/uio.h>

namespace fast_response {

// Writes `iov[0..iovcnt)` to `fd` with one writev(2), retried while it fails
// with EINTR. Returns the number of bytes written (possibly fewer than asked:
// the socket's send buffer was full), or -errno (-EAGAIN when nothing could
// be written now). Never blocks on a non-blocking descriptor, which is what
// libuv makes of every socket.
ssize_t Writev(int fd, const struct iovec* iov, int iovcnt);

}  // namespace fast_response

#endif  // FAST_RESPONSE_SOCKET_WRITE_H_
