// The MPI job an `onefit sweep` process belongs to when an MPI launcher started it (OpenMPI's
// mpirun, MPICH's mpiexec, Slurm's srun): its rank, and rank 0 gathering every rank's bytes.
// Built with ONEFIT_MPI (CMake finds an MPI, e.g. Debian's libopenmpi-dev); without it, a
// launched process says so instead of training the whole sweep once per rank.
#pragma once
#include <string>
#include <vector>

#include "onefit/distributed.hpp"

namespace onefit::cli {

// Whether an MPI launcher started this process (its environment says so), and the number of
// processes it started when the environment names it (0 when it does not).
bool started_by_mpi_launcher();
int launched_processes();

class MpiJob final : public RankGroup {
public:
    MpiJob(int& argc, char**& argv);  // MPI_Init_thread; throws Error when built without MPI
    ~MpiJob() override;               // MPI_Finalize
    MpiJob(const MpiJob&) = delete;
    MpiJob& operator=(const MpiJob&) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    // Point to point, each rank's bytes in pieces of at most 1 GiB (MPI counts are ints).
    std::vector<std::string> gather(const std::string& bytes) const override;
    // Whether this rank's gather has completed: from then on no rank waits for another's bytes.
    bool gathered() const { return gathered_; }
    // After the gather, rank 0 tells every rank the job's exit code, which the others wait for
    // instead of ending on their own: a job then ends without MPI_Abort racing a rank's
    // MPI_Finalize, a race in which OpenMPI 4.1's mpirun waits forever on its exited ranks
    // (seen here under load).
    void send_exit_code(int exit_code) const;
    int receive_exit_code() const;
    // Ends every rank of the job with `exit_code` (mpirun exits with it): one rank's error
    // before the gather must not leave the others waiting for it.
    [[noreturn]] void abort(int exit_code) const;

private:
    int rank_ = 0, size_ = 1;
    mutable bool gathered_ = false;
};

}  // namespace onefit::cli
