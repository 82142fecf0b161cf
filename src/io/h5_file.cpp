#include "io/h5_file.hpp"

#include <hdf5.h>

#include <mutex>

#include "core/forked_call.hpp"
#include "onefit/error.hpp"

namespace onefit::io {
namespace {

std::recursive_mutex& h5_lock() {
    static std::recursive_mutex lock;
    return lock;
}

// libhdf5 prints a stack of errors to stderr by default: off, once; the caller reports instead.
void quiet_hdf5() {
    static const bool done = [] {
        H5open();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return true;
    }();
    (void)done;
}

// One HDF5 identifier, released when it goes out of scope.
struct Id {
    hid_t id;
    explicit Id(hid_t i) : id(i) {}
    ~Id() {
        if (id >= 0) H5Idec_ref(id);
    }
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    bool ok() const { return id >= 0; }
};

constexpr char kSignature[] = "\x89HDF\r\n\x1a\n";

// The most values a dataset of a file of `bytes` may claim: Keras writes its arrays uncompressed,
// so more than the file holds (with room for compression) is a damaged or hostile size, refused
// before anything that size is allocated.
int64_t most_values(size_t bytes) { return 16 * static_cast<int64_t>(bytes) + 1024; }

// libhdf5 1.10 has known crashes and hangs on crafted files, and a reader must never take the
// process down. So every file is first read whole in a forked child: every link listed, every
// object's info taken, every numeric dataset read (what the parent's calls then do, on the same
// bytes, with the same library). The child's exit says whether that survived; a signal (a
// crash, or the alarm that ends a hang) makes the parent refuse the file without touching it.
herr_t read_object(hid_t file, const char* name, const H5O_info_t* info, void* image_bytes) {
    if (info->type == H5O_TYPE_GROUP) {
        Id g(H5Gopen2(file, name, H5P_DEFAULT));
        H5G_info_t members{};
        if (g.ok() && H5Gget_info(g.id, &members) >= 0)
            for (hsize_t i = 0; i < members.nlinks; ++i) {
                char text[256];
                H5Lget_name_by_idx(g.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, text, sizeof text, H5P_DEFAULT);
            }
        return 0;
    }
    if (info->type != H5O_TYPE_DATASET) return 0;
    Id set(H5Dopen2(file, name, H5P_DEFAULT));
    if (!set.ok()) return 0;
    Id type(H5Dget_type(set.id));
    const H5T_class_t kind = H5Tget_class(type.id);
    Id space(H5Dget_space(set.id));
    const hssize_t count = H5Sget_simple_extent_npoints(space.id);
    if ((kind != H5T_FLOAT && kind != H5T_INTEGER) || count <= 0 || count > most_values(*static_cast<size_t*>(image_bytes)))
        return 0;
    std::vector<float> values(static_cast<size_t>(count));
    H5Dread(set.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    if (count == 1 && kind == H5T_INTEGER) {
        int64_t value = 0;
        H5Dread(set.id, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
    }
    return 0;
}

constexpr int kReadWhole = 0, kCannotOpen = 3;  // the child's exits; anything else refuses the file

int read_whole(const std::string& image) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 ||
        H5Pset_file_image(fapl, const_cast<char*>(image.data()), image.size()) < 0)  // (copied)
        return kCannotOpen;
    const hid_t file = H5Fopen("onefit-check.h5", H5F_ACC_RDONLY, fapl);
    if (file < 0) return kCannotOpen;  // the parent's own open then reports it
    size_t bytes = image.size();
    H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, read_object, &bytes, H5O_INFO_BASIC);
    return kReadWhole;
}

// Called with the HDF5 lock held, so no other thread is inside libhdf5 when the child is made.
void check_in_a_child(const std::string& image, const std::string& file) {
    const ForkedCallEnd end = forked_call([&] { return read_whole(image); }, 60);
    if (end.kind == ForkedCallEnd::Kind::exited && (end.value == kReadWhole || end.value == kCannotOpen)) return;
    if (end.kind == ForkedCallEnd::Kind::timed_out)
        throw file_error(file, 0, 0, "is a damaged HDF5 file: libhdf5 did not finish reading it in 60 s; onefit refused it");
    throw file_error(file, 0, 0, "is a damaged HDF5 file: libhdf5 crashed reading it (" + end.describe() + "); onefit refused it");
}

}  // namespace

H5Writer::H5Writer() {
    std::lock_guard lock(h5_lock());
    quiet_hdf5();
    Id fapl(H5Pcreate(H5P_FILE_ACCESS));
    if (!fapl.ok() || H5Pset_fapl_core(fapl.id, 1 << 16, 0) < 0) throw Error("HDF5: cannot set up an in-memory file");
    file_ = H5Fcreate("onefit-weights.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id);
    if (file_ < 0) throw Error("HDF5: cannot create an in-memory file");
}

H5Writer::~H5Writer() {
    std::lock_guard lock(h5_lock());
    if (file_ >= 0) H5Fclose(file_);
}

void H5Writer::group(const std::string& path, const std::string& name) {
    std::lock_guard lock(h5_lock());
    Id lcpl(H5Pcreate(H5P_LINK_CREATE));
    H5Pset_create_intermediate_group(lcpl.id, 1);
    Id g(H5Gcreate2(file_, path.c_str(), lcpl.id, H5P_DEFAULT, H5P_DEFAULT));
    if (!g.ok()) throw Error("HDF5: cannot create the group '" + path + "'");
    if (name.empty()) return;
    Id type(H5Tcopy(H5T_C_S1));
    H5Tset_size(type.id, H5T_VARIABLE);
    H5Tset_cset(type.id, H5T_CSET_UTF8);
    Id space(H5Screate(H5S_SCALAR));
    Id attribute(H5Acreate2(g.id, "name", type.id, space.id, H5P_DEFAULT, H5P_DEFAULT));
    const char* text = name.c_str();
    if (!attribute.ok() || H5Awrite(attribute.id, type.id, &text) < 0)
        throw Error("HDF5: cannot write the name of the group '" + path + "'");
}

void H5Writer::floats(const std::string& path, const Shape& shape, const float* values) {
    std::lock_guard lock(h5_lock());
    std::vector<hsize_t> dims(shape.begin(), shape.end());
    Id space(shape.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    Id set(H5Dcreate2(file_, path.c_str(), H5T_IEEE_F32LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!set.ok() || H5Dwrite(set.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
        throw Error("HDF5: cannot write the dataset '" + path + "'");
}

void H5Writer::int64_scalar(const std::string& path, int64_t value) {
    std::lock_guard lock(h5_lock());
    Id space(H5Screate(H5S_SCALAR));
    Id set(H5Dcreate2(file_, path.c_str(), H5T_STD_I64LE, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!set.ok() || H5Dwrite(set.id, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0)
        throw Error("HDF5: cannot write the dataset '" + path + "'");
}

std::string H5Writer::bytes() {
    std::lock_guard lock(h5_lock());
    if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) throw Error("HDF5: cannot flush the in-memory file");
    const ssize_t size = H5Fget_file_image(file_, nullptr, 0);
    if (size <= 0) throw Error("HDF5: cannot read back the in-memory file");
    std::string image(static_cast<size_t>(size), '\0');
    if (H5Fget_file_image(file_, image.data(), image.size()) != size) throw Error("HDF5: cannot read back the in-memory file");
    return image;
}

H5Reader::H5Reader(std::string bytes, std::string file) : image_(std::move(bytes)), file_name_(std::move(file)) {
    // The signature first: libhdf5 is only ever given what looks like an HDF5 file.
    if (image_.size() < 64 || image_.compare(0, 8, kSignature, 8) != 0)
        throw file_error(file_name_, 0, 0, "is not an HDF5 file (no HDF5 signature at its start)");
    std::lock_guard lock(h5_lock());
    quiet_hdf5();
    check_in_a_child(image_, file_name_);
    Id fapl(H5Pcreate(H5P_FILE_ACCESS));
    if (!fapl.ok() || H5Pset_fapl_core(fapl.id, 1 << 16, 0) < 0 ||
        H5Pset_file_image(fapl.id, image_.data(), image_.size()) < 0)
        throw file_error(file_name_, 0, 0, "HDF5 cannot take the file's bytes");
    file_ = H5Fopen("onefit-read.h5", H5F_ACC_RDONLY, fapl.id);
    if (file_ < 0) throw file_error(file_name_, 0, 0, "is not a readable HDF5 file (damaged or cut short?)");
}

H5Reader::~H5Reader() {
    std::lock_guard lock(h5_lock());
    if (file_ >= 0) H5Fclose(file_);
}

bool H5Reader::has_group(const std::string& path) const {
    std::lock_guard lock(h5_lock());
    // H5Lexists needs each parent present: check component by component.
    size_t start = 0;
    while (start <= path.size()) {
        const size_t slash = path.find('/', start);
        const std::string prefix = path.substr(0, slash);
        if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    H5O_info_t info{};
    if (H5Oget_info_by_name(file_, path.c_str(), &info, H5P_DEFAULT) < 0) return false;
    return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> H5Reader::members(const std::string& group) const {
    std::lock_guard lock(h5_lock());
    Id g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT));
    if (!g.ok()) throw file_error(file_name_, 0, 0, "has no group '" + group + "'");
    H5G_info_t info{};
    if (H5Gget_info(g.id, &info) < 0) throw file_error(file_name_, 0, 0, "cannot list the group '" + group + "'");
    std::vector<std::string> names;
    for (hsize_t i = 0; i < info.nlinks; ++i) {
        const ssize_t n = H5Lget_name_by_idx(g.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
        if (n < 0) throw file_error(file_name_, 0, 0, "cannot list the group '" + group + "'");
        std::string name(static_cast<size_t>(n) + 1, '\0');
        H5Lget_name_by_idx(g.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
        name.resize(static_cast<size_t>(n));
        names.push_back(name);
    }
    return names;
}

Tensor H5Reader::array(const std::string& path) const {
    std::lock_guard lock(h5_lock());
    Id set(H5Dopen2(file_, path.c_str(), H5P_DEFAULT));
    if (!set.ok()) throw file_error(file_name_, 0, 0, "has no dataset '" + path + "'");
    Id type(H5Dget_type(set.id));
    const H5T_class_t kind = H5Tget_class(type.id);
    if (kind != H5T_FLOAT && kind != H5T_INTEGER)
        throw file_error(file_name_, 0, 0, "dataset '" + path + "' is not numbers (float or integer)");
    Id space(H5Dget_space(set.id));
    const int rank = H5Sget_simple_extent_ndims(space.id);
    if (rank < 0 || rank > 8) throw file_error(file_name_, 0, 0, "dataset '" + path + "' has an unreadable shape");
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
    Shape shape;
    int64_t count = 1;
    for (hsize_t d : dims) {
        if (d > (uint64_t{1} << 40) || (d > 0 && count > (int64_t{1} << 40) / static_cast<int64_t>(d)))
            throw file_error(file_name_, 0, 0, "dataset '" + path + "' is too large");
        shape.push_back(static_cast<int64_t>(d));
        count *= static_cast<int64_t>(d);
    }
    if (count > most_values(image_.size()))
        throw file_error(file_name_, 0, 0, "dataset '" + path + "' claims " + std::to_string(count) +
                                              " values, more than the file's " + std::to_string(image_.size()) +
                                              " bytes could hold");
    Tensor t(shape);
    if (count > 0 && H5Dread(set.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data()) < 0)
        throw file_error(file_name_, 0, 0, "cannot read the dataset '" + path + "' as float32");
    return t;
}

int64_t H5Reader::integer(const std::string& path) const {
    std::lock_guard lock(h5_lock());
    Id set(H5Dopen2(file_, path.c_str(), H5P_DEFAULT));
    if (!set.ok()) throw file_error(file_name_, 0, 0, "has no dataset '" + path + "'");
    Id type(H5Dget_type(set.id));
    Id space(H5Dget_space(set.id));
    int64_t value = 0;
    if (H5Tget_class(type.id) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.id) != 1 ||
        H5Dread(set.id, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0)
        throw file_error(file_name_, 0, 0, "dataset '" + path + "' is not one integer");
    return value;
}

}  // namespace onefit::io
