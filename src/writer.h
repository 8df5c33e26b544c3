// The FastResponse writer: the bytes a socket is to receive, in the order
// Node would send them, given to the kernel with one writev(2). In
// uWebSockets' words: cork buffer, then syscall, then socket buffer — what
// the kernel does not take stays here as pending parts, which lib/ hands to
// socket.write(), where libuv queues them and Node's backpressure works.
//
// The cork buffer holds what the writer copies (rendered heads, chunk
// framing, string bodies); a Buffer body is referenced, not copied, and its
// memory must stay alive and unchanged until Flush() and the pending parts
// have been taken. Plain C++17: nothing here knows of JavaScript or HTTP.
#ifndef FAST_RESPONSE_WRITER_H_
#define FAST_RESPONSE_WRITER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "head.h"

namespace fast_response {

class Writer {
 public:
  // One part of what is sent: a range of the cork buffer, or memory of the
  // caller's (`external`).
  struct Part {
    const uint8_t* data;
    size_t length;
    bool external;
    uint32_t tag;  // an external part's tag (SendExternal())
  };

  // What a Flush() did.
  struct FlushResult {
    size_t total = 0;    // bytes of all parts
    size_t written = 0;  // bytes writev(2) took
    int error = 0;       // errno of a failed writev(2) other than EAGAIN, or 0
  };

  // Copied bytes are appended here; Send() then sends a range of them.
  HeadBuffer& cork() { return cork_; }

  // Sends `length` bytes of the cork buffer from `offset` after what is
  // queued. The range may be anywhere in the cork buffer: a head rendered
  // after its body (its Content-Length needs the body's length) is sent
  // before it.
  void SendCopied(size_t offset, size_t length);
  // Sends `length` bytes of the caller's memory after what is queued;
  // `tag` names that memory to the caller in pending().
  void SendExternal(const uint8_t* data, size_t length, uint32_t tag = 0);

  size_t queued_bytes() const { return queued_bytes_; }

  // Writes everything queued with one writev(2) (retried on EINTR) to `fd`,
  // a non-blocking descriptor. What was written is forgotten; what was not
  // stays queued, in order (pending_count(), pending()).
  FlushResult Flush(int fd);

  size_t pending_count() const { return parts_.size(); }
  // The i-th part not written yet; valid until the writer changes.
  Part pending(size_t i) const;

  // Forgets the first `n` queued bytes, as if written (the caller handed
  // them to someone else); the first part left may be cut.
  void Consume(size_t n);

  // Forgets everything queued and clears the cork buffer, giving it back
  // when it grew beyond `keep` bytes.
  void Clear(size_t keep = HeadBuffer::kKeepBytes);

 private:
  struct Segment {
    const uint8_t* external;  // nullptr: a range of cork_
    size_t offset;            // into cork_, or into `external`
    size_t length;
    uint32_t tag;
  };
  Part PartOf(const Segment& s) const;

  HeadBuffer cork_;
  std::vector<Segment> parts_;
  size_t queued_bytes_ = 0;
};

}  // namespace fast_response

#endif  // FAST_RESPONSE_WRITER_H_
