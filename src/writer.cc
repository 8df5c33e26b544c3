#include "writer.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

#include "socket_write.h"

namespace fast_response {

namespace {
// writev(2) takes at most IOV_MAX (1024 on Linux) parts; more stay queued
// for the next call, as a short write leaves them.
constexpr size_t kMaxIov = 1024;
}  // namespace

void Writer::SendCopied(size_t offset, size_t length) {
  if (length == 0) return;
  queued_bytes_ += length;
  // A range that continues the last one is one part.
  if (!parts_.empty()) {
    Segment& last = parts_.back();
    if (last.external == nullptr && last.offset + last.length == offset) {
      last.length += length;
      return;
    }
  }
  parts_.push_back({nullptr, offset, length, 0});
}

void Writer::SendExternal(const uint8_t* data, size_t length, uint32_t tag) {
  if (length == 0) return;
  queued_bytes_ += length;
  parts_.push_back({data, 0, length, tag});
}

Writer::Part Writer::PartOf(const Segment& s) const {
  if (s.external != nullptr)
    return {s.external + s.offset, s.length, true, s.tag};
  return {cork_.data() + s.offset, s.length, false, 0};
}

Writer::Part Writer::pending(size_t i) const { return PartOf(parts_[i]); }

Writer::FlushResult Writer::Flush(int fd) {
  FlushResult r;
  r.total = queued_bytes_;
  if (parts_.empty()) return r;
  const size_t count = std::min(parts_.size(), kMaxIov);
  struct iovec iov[kMaxIov];
  for (size_t i = 0; i < count; i++) {
    const Part p = PartOf(parts_[i]);
    iov[i].iov_base = const_cast<uint8_t*>(p.data);
    iov[i].iov_len = p.length;
  }
  const ssize_t n = Writev(fd, iov, static_cast<int>(count));
  if (n < 0) {
    if (n != -EAGAIN && n != -EWOULDBLOCK) r.error = static_cast<int>(-n);
    return r;
  }
  r.written = static_cast<size_t>(n);
  Consume(r.written);
  return r;
}

void Writer::Consume(size_t n) {
  size_t left = n < queued_bytes_ ? n : queued_bytes_;
  queued_bytes_ -= left;
  size_t done = 0;
  while (done < parts_.size() && left >= parts_[done].length) {
    left -= parts_[done].length;
    done++;
  }
  if (done < parts_.size() && left != 0) {
    parts_[done].offset += left;
    parts_[done].length -= left;
  }
  parts_.erase(parts_.begin(), parts_.begin() + done);
}

void Writer::Clear(size_t keep) {
  parts_.clear();
  queued_bytes_ = 0;
  cork_.Release(keep);
}

}  // namespace fast_response
