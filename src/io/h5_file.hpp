// HDF5 files held in memory, as Keras 3's model.weights.h5 is laid out: groups, a string "name"
// attribute on some, and numeric datasets. Only what the Keras files need, over Debian's libhdf5
// (the C API; its error printing switched off, every call checked and turned into an Error).
// The serial libhdf5 is not thread-safe: every call here holds one process-wide lock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "onefit/tensor.hpp"

namespace onefit::io {

// Builds an HDF5 file in memory (the core driver, no backing file); bytes() is the file.
class H5Writer {
public:
    H5Writer();
    ~H5Writer();
    H5Writer(const H5Writer&) = delete;
    H5Writer& operator=(const H5Writer&) = delete;
    // A group at `path` ("layers/dense/vars"; missing parents are made), with the attribute
    // name = `name` (h5py's variable-length UTF-8 string) unless `name` is empty.
    void group(const std::string& path, const std::string& name = "");
    // A float32 dataset of this shape (rank 0: a scalar) at `path` in an existing group.
    void floats(const std::string& path, const Shape& shape, const float* values);
    void int64_scalar(const std::string& path, int64_t value);
    std::string bytes();

private:
    int64_t file_ = -1;  // hid_t
};

// Reads an HDF5 file's bytes. Errors name `file` (what the user gave: "m.keras/model.weights.h5").
class H5Reader {
public:
    H5Reader(std::string bytes, std::string file);
    ~H5Reader();
    H5Reader(const H5Reader&) = delete;
    H5Reader& operator=(const H5Reader&) = delete;
    // Whether `path` names a group (every component present and a group).
    bool has_group(const std::string& path) const;
    // A group's member names, in HDF5's name order.
    std::vector<std::string> members(const std::string& group) const;
    // A numeric dataset (float or integer of any width) as float32, in its shape.
    Tensor array(const std::string& path) const;
    // A scalar integer dataset (an optimizer's iteration count).
    int64_t integer(const std::string& path) const;
    const std::string& file() const { return file_name_; }

private:
    std::string image_;  // the bytes the core driver reads (kept alive while the file is open)
    std::string file_name_;
    int64_t file_ = -1;
};

}  // namespace onefit::io
