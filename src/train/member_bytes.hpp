// The bytes values travel as between processes (encode_members, the distributed sweep's
// reports): little-endian 64-bit words, floats and doubles bit for bit, strings with their
// length. Reader checks every length against what is left before it allocates, and throws
// Error on anything short or malformed.
#pragma once
#include <bit>
#include <cstdint>
#include <string>

#include "core/byte_order.hpp"
#include "onefit/error.hpp"

namespace onefit::train {

class Writer {
public:
    void u64(uint64_t v) {
        unsigned char b[8];
        store_le(b, v);
        out_.append(reinterpret_cast<const char*>(b), 8);
    }
    void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
    void f32(float v) { u64(std::bit_cast<uint32_t>(v)); }
    void f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
    void text(const std::string& s) { u64(s.size()), out_ += s; }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

class Reader {
public:
    explicit Reader(const std::string& bytes) : bytes_(bytes) {}
    uint64_t u64() {
        need(8);
        const uint64_t v = load_le<uint64_t>(bytes_of(bytes_) + at_);
        at_ += 8;
        return v;
    }
    int64_t i64() { return static_cast<int64_t>(u64()); }
    float f32() {
        const uint64_t word = u64();
        if (word >> 32) fail();  // (a float's word has nothing in its upper half)
        return std::bit_cast<float>(static_cast<uint32_t>(word));
    }
    double f64() { return std::bit_cast<double>(u64()); }
    // A count of items at least `item_bytes` each, checked against what is left before anything
    // is allocated for it.
    size_t count(size_t item_bytes) {
        const uint64_t n = u64();
        if (n > (bytes_.size() - at_) / item_bytes) fail();
        return static_cast<size_t>(n);
    }
    std::string text() {
        const size_t n = count(1);
        std::string s = bytes_.substr(at_, n);
        at_ += n;
        return s;
    }
    bool done() const { return at_ == bytes_.size(); }

private:
    void need(size_t n) const {
        if (bytes_.size() - at_ < n) fail();
    }
    [[noreturn]] static void fail() { throw Error("sweep: a rank's report arrived truncated or malformed"); }
    const std::string& bytes_;
    size_t at_ = 0;
};

}  // namespace onefit::train
