#include "socket_write.h"

#include <errno.h>
#include <unistd.h>

namespace fast_response {

ssize_t Writev(int fd, const struct iovec* iov, int iovcnt) {
  for (;;) {
    const ssize_t n = writev(fd, iov, iovcnt);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

}  // namespace fast_response
