#include "runtime/cpu/gemm_libraries.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#if ONEFIT_HAVE_XSMM
#include <libxsmm.h>
#endif

namespace onefit::cpu {
namespace {

struct Loaded {
    void* handle = nullptr;
    CblasSgemm sgemm = nullptr;
    std::string version;
};

// Debian's runtime packages: libopenblas0 (any of its pthread, openmp or serial builds) and libblis4.
Loaded load(GemmLibrary library) {
    Loaded l;
    const char* soname = library == GemmLibrary::openblas ? "libopenblas.so.0" : "libblis.so.4";
    l.handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!l.handle) return l;
    l.sgemm = reinterpret_cast<CblasSgemm>(dlsym(l.handle, "cblas_sgemm"));
    if (library == GemmLibrary::openblas) {
        if (auto threads = reinterpret_cast<void (*)(int)>(dlsym(l.handle, "openblas_set_num_threads"))) threads(1);
        auto config = reinterpret_cast<const char* (*)()>(dlsym(l.handle, "openblas_get_config"));
        auto core = reinterpret_cast<const char* (*)()>(dlsym(l.handle, "openblas_get_corename"));
        l.version = std::string("OpenBLAS ") + (config ? config() : "?") + " core " + (core ? core() : "?");
    } else {
        if (auto threads = reinterpret_cast<void (*)(long)>(dlsym(l.handle, "bli_thread_set_num_threads"))) threads(1);
        auto version = reinterpret_cast<const char* (*)()>(dlsym(l.handle, "bli_info_get_version_str"));
        l.version = std::string("BLIS ") + (version ? version() : "?");
    }
    return l;
}

const Loaded& loaded(GemmLibrary library) {
    static std::once_flag once[kGemmLibraries];
    static Loaded libraries[kGemmLibraries];
    const int i = static_cast<int>(library);
    std::call_once(once[i], [&] { libraries[i] = load(library); });
    return libraries[i];
}

}  // namespace

CblasSgemm cblas_sgemm_of(GemmLibrary library) {
    return library == GemmLibrary::xsmm ? nullptr : loaded(library).sgemm;
}

const char* gemm_library_name(GemmLibrary library) {
    switch (library) {
        case GemmLibrary::xsmm: return "xsmm";
        case GemmLibrary::openblas: return "openblas";
        case GemmLibrary::blis: return "blis";
    }
    return "?";
}

bool gemm_library_available(GemmLibrary library) {
    if (library == GemmLibrary::xsmm) return ONEFIT_HAVE_XSMM != 0;
    return cblas_sgemm_of(library) != nullptr;
}

std::string gemm_library_version(GemmLibrary library) {
    if (library != GemmLibrary::xsmm) return gemm_library_available(library) ? loaded(library).version : "absent";
#if ONEFIT_HAVE_XSMM
    return "LIBXSMM " + std::to_string(LIBXSMM_VERSION_MAJOR) + "." + std::to_string(LIBXSMM_VERSION_MINOR);
#else
    return "absent";
#endif
}

}  // namespace onefit::cpu
