// distributed: one sweep split across processes, on several machines (`mpirun -np N onefit
// sweep ...`, Slurm's srun). Each rank trains a contiguous share of the members on its own cores;
// rank 0 gathers them, and the result is a single process's, bit for bit. The library knows
// nothing of MPI: a RankGroup carries the bytes (the CLI's is MPI, tools/onefit/mpi_job.cpp).
#pragma once
#include <string>
#include <vector>

#include "onefit/sweep.hpp"

namespace onefit {

class RankGroup {
public:
    virtual ~RankGroup() = default;
    virtual int rank() const = 0;  // 0 .. size() - 1
    virtual int size() const = 0;
    // Collective: every rank calls it once with its bytes; rank 0 gets every rank's, in rank
    // order (its own first), the others an empty vector.
    virtual std::vector<std::string> gather(const std::string& bytes) const = 0;
};

// sweep() with the members split across the group's ranks, rank r training members
// [n * r / size, n * (r + 1) / size). Rank 0 returns every member, equal to sweep() in one
// process (configuration, History and weights, bit for bit); the other ranks return none.
// A failure on any rank (the first failed member in member order, as sweep() names it) throws
// on rank 0 after every rank has reported, so no rank waits for one that gave up.
std::vector<SweepMember> sweep(const RankGroup& ranks, const Sequential& model, const Optimizer& optimizer,
                               const Loss& loss, const CompileOptions& compile_options, const Tensor& x,
                               const Tensor& y, FitOptions options, const SweepGrid& grid);

// The bytes a rank's members travel as (little-endian, every float and double bit for bit),
// and back; decode_members throws Error on bytes that are not encode_members's.
std::string encode_members(const std::vector<SweepMember>& members);
std::vector<SweepMember> decode_members(const std::string& bytes);

}  // namespace onefit
