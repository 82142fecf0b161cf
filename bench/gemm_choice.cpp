// The measurement behind onefit's choice of CPU matrix-multiply library.
//
// Times the three float32 products of a dense layer's training step (all row-major):
//   fwd: Y[M,N]  = X[M,K] W[K,N]
//   dw:  dW[K,N] = X^T[K,M] dY[M,N]
//   dx:  dX[M,K] = dY[M,N] W^T[N,K]
// for the iris and mnist layer shapes, with every candidate compiled in: OpenBLAS (always; default
// thread count and 1 thread), oneDNN (ONEFIT_BENCH_DNNL), LIBXSMM (ONEFIT_BENCH_XSMM), Eigen
// (ONEFIT_BENCH_EIGEN) and a plain C++ loop. Output, one `name: value unit` per line:
//   gemm_<candidate>_<shape>_<fwd|dw|dx>: <median> ns        (+ `..._gflops: <v> GFLOP/s` for mnist)
//   fastest_<shape>: <candidate>                             (smallest fwd+dw+dx sum)
// Every result is checked against a double-precision reference first; a wrong one aborts the run.
// Operands stay hot in cache between repetitions, as a layer's weights do during training.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifdef ONEFIT_BENCH_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif
#ifdef ONEFIT_BENCH_XSMM
#include <libxsmm.h>
#endif
#ifdef ONEFIT_BENCH_EIGEN
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 false positives in Eigen's AVX-512 code
#include <Eigen/Core>
#endif

namespace {

// Row-major C[m,n] = op(A)[m,k] op(B)[k,n] (alpha 1, beta 0). A is stored k x m when ta (else
// m x k), B is stored n x k when tb (else k x n); leading dimensions are tight.
struct Gemm {
  int m, n, k;
  bool ta, tb;
  int lda() const { return ta ? m : k; }
  int ldb() const { return tb ? k : n; }
  double flops() const { return 2.0 * m * n * k; }
};

using Kernel = std::function<void(const float* A, const float* B, float* C)>;

// Keeps the compiler from dropping or merging repeated calls whose result is never read.
inline void clobber(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

// ---- candidates: each helper prepares a kernel for one product shape -------------------------

Kernel make_openblas(const Gemm& g) {  // thread count is set by the caller
  return [g](const float* A, const float* B, float* C) {
    cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans, g.tb ? CblasTrans : CblasNoTrans,
                g.m, g.n, g.k, 1.0f, A, g.lda(), B, g.ldb(), 0.0f, C, g.n);
  };
}

#ifdef ONEFIT_BENCH_DNNL
Kernel make_dnnl(const Gemm& g) {  // row-major C API, OpenMP threads as configured by default
  return [g](const float* A, const float* B, float* C) {
    if (dnnl_sgemm(g.ta ? 'T' : 'N', g.tb ? 'T' : 'N', g.m, g.n, g.k, 1.0f, A, g.lda(), B, g.ldb(),
                   0.0f, C, g.n) != dnnl_success) {
      std::fprintf(stderr, "gemm_choice: dnnl_sgemm failed\n");
      std::abort();
    }
  };
}
#endif

#ifdef ONEFIT_BENCH_XSMM
std::vector<std::string> xsmm_notes;  // products that needed the transpose workaround

Kernel make_xsmm(const Gemm& g) {  // single-threaded JIT kernels, dispatched once per shape
  // LIBXSMM is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so
  // the operands (and m, n) swap places and each keeps its own transpose flag.
  const libxsmm_blasint m = g.n, n = g.m, k = g.k, ldb = g.lda(), ldc = g.n;
  const int trans_b = g.ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  const auto dispatch = [&](int flags, libxsmm_blasint lda) {
    const int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    const float alpha = 1.0f, beta = 0.0f;
    return libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
  };
  if (libxsmm_smmfunction f = dispatch(trans_b | (g.tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0), g.ldb()))
    return [f](const float* A, const float* B, float* C) { f(B, A, C); };
  // 1.17 has no JIT kernel with a transposed first operand (our dx): transpose it explicitly with
  // libxsmm_otrans into a scratch buffer, inside the timed call, and run the untransposed kernel.
  libxsmm_smmfunction f = g.tb ? dispatch(trans_b, g.n) : nullptr;
  if (!f) {
    std::fprintf(stderr, "gemm_choice: no LIBXSMM kernel for %dx%dx%d\n", g.m, g.n, g.k);
    std::abort();
  }
  xsmm_notes.push_back(std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k));
  auto bt = std::make_shared<std::vector<float>>(std::size_t(g.n) * g.k);
  return [f, g, bt](const float* A, const float* B, float* C) {
    libxsmm_otrans(bt->data(), B, sizeof(float), g.k, g.n, g.k, g.n);
    f(bt->data(), A, C);
  };
}
#endif

#ifdef ONEFIT_BENCH_EIGEN
Kernel make_eigen(const Gemm& g) {  // Eigen::nbThreads() as configured by default
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return [g](const float* A, const float* B, float* C) {
    Eigen::Map<const RowMat> a(A, g.ta ? g.k : g.m, g.ta ? g.m : g.k);
    Eigen::Map<const RowMat> b(B, g.tb ? g.n : g.k, g.tb ? g.k : g.n);
    Eigen::Map<RowMat> c(C, g.m, g.n);
    if (g.ta && g.tb) c.noalias() = a.transpose() * b.transpose();
    else if (g.ta) c.noalias() = a.transpose() * b;
    else if (g.tb) c.noalias() = a * b.transpose();
    else c.noalias() = a * b;
  };
}
#endif

// The "own small kernel" baseline: a plain triple loop in i-k-j order whose inner loop runs over
// contiguous memory and is auto-vectorized. This is NOT onefit's production path: onefit's own
// fused kernels (product + bias + activation in one pass) are benchmarked in bench_iris_fit.
Kernel make_loop(const Gemm& g) {
  return [g](const float* __restrict A, const float* __restrict B, float* __restrict C) {
    const int m = g.m, n = g.n, k = g.k;
    if (!g.tb) {  // fwd, dw: C[i,:] += op(A)[i,p] * B[p,:]
      std::fill_n(C, m * n, 0.0f);
      for (int i = 0; i < m; ++i) {
        float* __restrict c = C + i * n;
        for (int p = 0; p < k; ++p) {
          const float a = g.ta ? A[p * m + i] : A[i * k + p];
          const float* __restrict b = B + p * n;
          for (int j = 0; j < n; ++j) c[j] += a * b[j];
        }
      }
      return;
    }
    // dx: C[i,j] = dot(A[i,:], B[j,:]), both rows contiguous; 16 partial sums let the inner loop
    // vectorize without -ffast-math. (op(A) transposed as well is not needed here.)
    for (int i = 0; i < m; ++i) {
      const float* __restrict a = A + i * k;
      for (int j = 0; j < n; ++j) {
        const float* __restrict b = B + j * k;
        float acc[16] = {};
        int p = 0;
        for (; p + 16 <= k; p += 16)
          for (int l = 0; l < 16; ++l) acc[l] += a[p + l] * b[p + l];
        float s = 0.0f;
        for (int l = 0; l < 16; ++l) s += acc[l];
        for (; p < k; ++p) s += a[p] * b[p];
        C[i * n + j] = s;
      }
    }
  };
}

// ---- checking and timing ---------------------------------------------------------------------

void check(const char* what, const Gemm& g, const Kernel& f, const float* A, const float* B,
           float* C) {
  std::fill_n(C, g.m * g.n, std::numeric_limits<float>::quiet_NaN());  // catch unwritten output
  f(A, B, C);
  double max_err = 0.0, max_ref = 0.0;
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      double ref = 0.0;  // the plain loop, in double
      for (int p = 0; p < g.k; ++p)
        ref += double(g.ta ? A[p * g.m + i] : A[i * g.k + p]) *
               double(g.tb ? B[j * g.k + p] : B[p * g.n + j]);
      const double err = std::fabs(double(C[i * g.n + j]) - ref);
      max_err = std::isnan(err) ? INFINITY : std::max(max_err, err);
      max_ref = std::max(max_ref, std::fabs(ref));
    }
  if (!(max_err <= 1e-4 * max_ref)) {  // relative to the largest reference element
    std::fprintf(stderr, "gemm_choice: %s is WRONG: max |C - ref| = %g, max |ref| = %g\n", what,
                 max_err, max_ref);
    std::abort();
  }
}

// Timing is spread over kRounds rounds through all candidates, so that a burst of load from other
// processes on this (small, shared) machine spoils at most some of a line's samples; each line
// reports the median of its kRounds * kSamples samples (~0.15 s in all).
constexpr int kRounds = 5, kSamples = 11;
constexpr double kRoundSeconds = 0.03;

// Appends kSamples samples, each the mean ns per call over a batch of calls, after a warm-up.
void sample_ns(const Kernel& f, const float* A, const float* B, float* C, double warmup_s,
               std::vector<double>& out) {
  using clock = std::chrono::steady_clock;
  const auto ns = [](clock::duration d) { return std::chrono::duration<double, std::nano>(d).count(); };
  long calls = 0;
  const auto t0 = clock::now();
  do {
    f(A, B, C);
    clobber(C);
    ++calls;
  } while (ns(clock::now() - t0) < warmup_s * 1e9);
  const double per_call = ns(clock::now() - t0) / double(calls);
  const long batch = std::max(1L, long(kRoundSeconds * 1e9 / kSamples / per_call));
  for (int i = 0; i < kSamples; ++i) {
    const auto start = clock::now();
    for (long b = 0; b < batch; ++b) {
      f(A, B, C);
      clobber(C);
    }
    out.push_back(ns(clock::now() - start) / double(batch));
  }
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// ---- shapes, candidates, report --------------------------------------------------------------

struct Shape {
  const char* name;
  int M, K, N;  // batch, inputs, units
  bool gflops;
};

struct Operands {  // one dense layer's X, W, dY and an output buffer big enough for any product
  std::vector<float> X, W, dY, out;
  explicit Operands(const Shape& s, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const auto fill = [&](std::vector<float>& v, int size) {
      v.resize(size);
      for (float& x : v) x = u(rng);
    };
    fill(X, s.M * s.K);
    fill(W, s.K * s.N);
    fill(dY, s.M * s.N);
    out.resize(std::max({s.M * s.N, s.K * s.N, s.M * s.K}));
  }
};

struct Candidate {
  std::string name;
  std::function<Kernel(const Gemm&)> make;
  std::function<void()> before;  // e.g. set the thread count
};

std::string cpu_model(bool& avx512) {  // "model name, N logical cpus, avx512f"
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown";
  bool got_model = false, got_flags = false;
  while (!(got_model && got_flags) && std::getline(in, line)) {
    if (!got_model && line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      got_model = true;
    } else if (!got_flags && line.rfind("flags", 0) == 0) {
      avx512 = line.find(" avx512f") != std::string::npos;
      got_flags = true;
    }
  }
  std::string load;  // other processes' load skews the multi-threaded candidates most
  std::getline(std::ifstream("/proc/loadavg") >> std::ws, load);
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical cpus" +
         (avx512 ? ", avx512f" : "") + ", loadavg " + load.substr(0, load.find(' '));
}

}  // namespace

int main() {
  const Shape shapes[] = {{"iris1", 20, 4, 32, false},
                          {"iris2", 20, 32, 3, false},
                          {"mnist1", 128, 784, 256, true},
                          {"mnist2", 128, 256, 10, true}};
  const int blas_threads = openblas_get_num_threads();
  std::vector<Candidate> cands = {
      {"openblas", make_openblas, [=] { openblas_set_num_threads(blas_threads); }},
      {"openblas1t", make_openblas, [] { openblas_set_num_threads(1); }},
  };
  bool avx512 = false;
  std::string header = "# gemm_choice: fp32 row-major sgemm fwd/dw/dx of dense layers, median ns of " +
                       std::to_string(kRounds * kSamples) + " samples in " + std::to_string(kRounds) +
                       " rounds, fastest = least fwd+dw+dx";
  header += " | cpu: " + cpu_model(avx512);
  header += " | openblas: " + std::string(openblas_get_config()) + " core=" + openblas_get_corename() +
            " threads=" + std::to_string(blas_threads) + " (openblas) and 1 (openblas1t)";
#ifdef ONEFIT_BENCH_DNNL
  const dnnl_version_t* dv = dnnl_version();
  const char* omp = std::getenv("OMP_NUM_THREADS");
  header += " | dnnl " + std::to_string(dv->major) + "." + std::to_string(dv->minor) + "." +
            std::to_string(dv->patch) + (dv->cpu_runtime == DNNL_RUNTIME_OMP ? " OpenMP" : "") +
            " threads=" + (omp ? std::string(omp) : std::to_string(std::thread::hardware_concurrency()));
  cands.push_back({"dnnl", make_dnnl, [] {}});
#endif
#ifdef ONEFIT_BENCH_XSMM
  libxsmm_init();
  header += " | xsmm " LIBXSMM_VERSION " target=" + std::string(libxsmm_get_target_arch()) + " threads=1";
  cands.push_back({"xsmm", make_xsmm, [] {}});
#endif
#ifdef ONEFIT_BENCH_EIGEN
  header += " | eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
            "." + std::to_string(EIGEN_MINOR_VERSION) + " threads=" + std::to_string(Eigen::nbThreads());
  cands.push_back({"eigen", make_eigen, [] {}});
#endif
  header += " | loop threads=1";
  cands.push_back({"loop", make_loop, [] {}});
  std::printf("%s\n", header.c_str());
  const std::string core = openblas_get_corename();
  if (avx512 && (core == "Haswell" || core == "Zen"))  // DYNAMIC_ARCH did not recognise this CPU
    std::printf("# openblas: AVX2 kernels (core=%s) on an AVX-512 CPU; OPENBLAS_CORETYPE=SkylakeX "
                "selects its AVX-512 kernels\n", core.c_str());

  std::mt19937 rng(42);
  std::vector<Operands> data;
  for (const Shape& s : shapes) data.emplace_back(s, rng);

  struct Line {  // one candidate x shape x product
    std::string name;
    size_t cand, shape;
    Gemm g;
    const float *A, *B;
    float* C;
    Kernel kernel;
    std::vector<double> ns;
  };
  std::vector<Line> lines;
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    cands[ci].before();
    for (size_t si = 0; si < std::size(shapes); ++si) {
      const Shape& s = shapes[si];
      Operands& d = data[si];
      const struct {
        const char* name;
        Gemm g;
        const float *A, *B;
      } products[] = {{"fwd", {s.M, s.N, s.K, false, false}, d.X.data(), d.W.data()},
                      {"dw", {s.K, s.N, s.M, true, false}, d.X.data(), d.dY.data()},
                      {"dx", {s.M, s.K, s.N, false, true}, d.dY.data(), d.W.data()}};
      for (const auto& p : products) {
        Line l{"gemm_" + cands[ci].name + "_" + s.name + "_" + p.name, ci, si, p.g, p.A, p.B,
               d.out.data(), cands[ci].make(p.g), {}};
        check(l.name.c_str(), l.g, l.kernel, l.A, l.B, l.C);
        lines.push_back(std::move(l));
      }
    }
  }

  // Candidate-major within a round, with a pause in between, so that one library's idle worker
  // threads (OpenBLAS pthreads, OpenMP) have stopped spinning before the next one is timed.
  for (int round = 0; round < kRounds; ++round)
    for (size_t ci = 0; ci < cands.size(); ++ci) {
      cands[ci].before();
      for (Line& l : lines)
        if (l.cand == ci) sample_ns(l.kernel, l.A, l.B, l.C, round == 0 ? 0.02 : 0.005, l.ns);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }

  std::map<std::string, std::map<std::string, double>> step_ns;  // shape -> candidate -> fwd+dw+dx
  for (const Line& l : lines) {
    const double t = median(l.ns);
    step_ns[shapes[l.shape].name][cands[l.cand].name] += t;
    std::printf("%s: %.1f ns\n", l.name.c_str(), t);
    if (shapes[l.shape].gflops) std::printf("%s_gflops: %.2f GFLOP/s\n", l.name.c_str(), l.g.flops() / t);
  }
#ifdef ONEFIT_BENCH_XSMM
  for (const std::string& n : xsmm_notes)
    std::printf("# xsmm: %s (m x n x k): 1.17 has no JIT kernel for W^T, timed libxsmm_otrans(W) + kernel\n",
                n.c_str());
  libxsmm_finalize();
#endif
  for (const Shape& s : shapes) {
    const auto& per = step_ns[s.name];
    const auto best = std::min_element(per.begin(), per.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    std::printf("fastest_%s: %s\n", s.name, best->first.c_str());
  }
  return 0;
}
