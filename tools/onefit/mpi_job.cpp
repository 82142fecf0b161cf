// MpiJob over MPI's C API (ONEFIT_HAVE_MPI), or the error a build without MPI gives.
#include "mpi_job.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "onefit/error.hpp"

#if ONEFIT_HAVE_MPI
#include <mpi.h>
#endif

namespace onefit::cli {

namespace {
int env_int(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::atoi(value) : 0;
}
}  // namespace

bool started_by_mpi_launcher() {
    // OpenMPI; MPICH, Intel MPI and Slurm's PMI-2; PMIx (OpenMPI 5, srun --mpi=pmix).
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
        if (std::getenv(name)) return true;
    return false;
}

int launched_processes() {
    if (const int n = env_int("OMPI_COMM_WORLD_SIZE")) return n;
    return env_int("PMI_SIZE");
}

#if ONEFIT_HAVE_MPI

namespace {
void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw Error(std::string("MPI: ") + what + " failed: " + std::string(text, static_cast<size_t>(length)));
}

constexpr int kSizeTag = 1, kBytesTag = 2, kExitCodeTag = 3;
constexpr size_t kPiece = size_t{1} << 30;
}  // namespace

MpiJob::MpiJob(int& argc, char**& argv) {
    int provided = 0;  // only the main thread calls MPI; the thread pool's workers never do
    check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // errors as codes, thrown as Error
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

MpiJob::~MpiJob() { MPI_Finalize(); }

std::vector<std::string> MpiJob::gather(const std::string& bytes) const {
    if (rank_ != 0) {
        uint64_t size = bytes.size();
        check(MPI_Send(&size, 1, MPI_UINT64_T, 0, kSizeTag, MPI_COMM_WORLD), "MPI_Send");
        for (size_t at = 0; at < bytes.size(); at += kPiece)
            check(MPI_Send(bytes.data() + at, static_cast<int>(std::min(kPiece, bytes.size() - at)), MPI_BYTE, 0,
                           kBytesTag, MPI_COMM_WORLD),
                  "MPI_Send");
        gathered_ = true;
        return {};
    }
    std::vector<std::string> all(static_cast<size_t>(size_));
    all[0] = bytes;
    for (int from = 1; from < size_; ++from) {  // (a rank that died ends the job: mpirun stops us)
        uint64_t size = 0;
        check(MPI_Recv(&size, 1, MPI_UINT64_T, from, kSizeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
        std::string& theirs = all[static_cast<size_t>(from)];
        theirs.resize(static_cast<size_t>(size));
        for (size_t at = 0; at < theirs.size(); at += kPiece)
            check(MPI_Recv(theirs.data() + at, static_cast<int>(std::min(kPiece, theirs.size() - at)), MPI_BYTE, from,
                           kBytesTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv");
    }
    gathered_ = true;
    return all;
}

void MpiJob::send_exit_code(int exit_code) const {
    for (int to = 1; to < size_; ++to)
        if (MPI_Send(&exit_code, 1, MPI_INT, to, kExitCodeTag, MPI_COMM_WORLD) != MPI_SUCCESS) abort(exit_code);
}

int MpiJob::receive_exit_code() const {
    int exit_code = 0;
    check(MPI_Recv(&exit_code, 1, MPI_INT, 0, kExitCodeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    return exit_code;
}

void MpiJob::abort(int exit_code) const {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
}

#else

MpiJob::MpiJob(int&, char**&) {
    throw Error("an MPI launcher started this process, but this onefit was built without MPI (install "
                "libopenmpi-dev and configure with -DONEFIT_MPI=ON)");
}
MpiJob::~MpiJob() = default;
std::vector<std::string> MpiJob::gather(const std::string& bytes) const { return {bytes}; }
void MpiJob::send_exit_code(int) const {}
int MpiJob::receive_exit_code() const { return 0; }
void MpiJob::abort(int exit_code) const { std::_Exit(exit_code); }

#endif

}  // namespace onefit::cli
