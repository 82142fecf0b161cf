// data_load: how fast onefit reads a 1,000,000 x 20 data set (issue 11), next to pyarrow's CSV
// reader and np.load on the same files, in the same run. Generates, once, into DIR (default
// ./bench-data): data.csv (header f0..f19,label; N(0,1) features as %.6f, integer labels 0..9,
// ~192 MB), x.npy (float32, C order, 80 MB) and y.npy (int64). Every load runs in a fresh
// process (this program with --child, or bench/peers/load_peer.py), so its peak RSS is its own;
// the rounds alternate onefit and the peer, and each ratio is the median of the per-round ratios
// (other work on a shared machine slows whole stretches of time; a pair runs seconds apart).
//   bench_data_load [DIR] [ROUNDS]      PYTHON=... picks the interpreter for the peers
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "onefit/dataset.hpp"
#include "onefit/io.hpp"

namespace {

constexpr int64_t kRows = 1000000, kFeatures = 20;
constexpr double kFeatureBytes = 4.0 * kRows * kFeatures;  // the float32 features: 80 MB

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double rss_mb() {  // resident now
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}
double peak_rss_mb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6;
}

void npy_header(FILE* f, const char* descr, const std::string& shape) {
    std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(dict.size() & 0xff),
                                        static_cast<unsigned char>(dict.size() >> 8)};
    std::fwrite(preamble, 1, sizeof preamble, f);
    std::fwrite(dict.data(), 1, dict.size(), f);
}

// The data set, written once; the same values in all three files (the CSV's as printed).
void generate(const std::string& dir) {
    std::filesystem::create_directories(dir);
    std::printf("# generating %s/{data.csv,x.npy,y.npy} (once)\n", dir.c_str());
    std::fflush(stdout);
    std::mt19937_64 rng(11);
    std::normal_distribution<float> normal;
    FILE* csv = std::fopen((dir + "/data.csv.tmp").c_str(), "wb");
    FILE* x = std::fopen((dir + "/x.npy").c_str(), "wb");
    FILE* y = std::fopen((dir + "/y.npy").c_str(), "wb");
    if (!csv || !x || !y) {
        std::fprintf(stderr, "bench_data_load: cannot write into %s\n", dir.c_str());
        std::exit(1);
    }
    npy_header(x, "<f4", "(" + std::to_string(kRows) + ", " + std::to_string(kFeatures) + ")");
    npy_header(y, "<i8", "(" + std::to_string(kRows) + ",)");
    for (int64_t j = 0; j < kFeatures; ++j) std::fprintf(csv, "f%" PRId64 ",", j);
    std::fprintf(csv, "label\n");
    std::vector<float> row(kFeatures);
    char text[32];
    for (int64_t i = 0; i < kRows; ++i) {
        for (int64_t j = 0; j < kFeatures; ++j) {
            std::snprintf(text, sizeof text, "%.6f", static_cast<double>(normal(rng)));
            row[static_cast<size_t>(j)] = std::strtof(text, nullptr);
            std::fputs(text, csv);
            std::fputc(',', csv);
        }
        const int64_t label = static_cast<int64_t>(rng() % 10);
        std::fprintf(csv, "%" PRId64 "\n", label);
        std::fwrite(row.data(), sizeof(float), row.size(), x);
        std::fwrite(&label, sizeof label, 1, y);
    }
    std::fclose(csv);
    std::fclose(x);
    std::fclose(y);
    std::filesystem::rename(dir + "/data.csv.tmp", dir + "/data.csv");
}

// One load in this process: "seconds cpu_seconds peak_rss_mb baseline_rss_mb".
int child(const std::string& mode, const std::string& dir) {
    const double baseline = rss_mb();
    const double t0 = now_s(), c0 = cpu_s();
    double sum = 0;
    if (mode == "csv") {
        const onefit::LabeledData d = onefit::read_csv(dir + "/data.csv");
        sum = d.x.data()[0];
    } else {
        const onefit::LabeledData d = onefit::read_npy_pair(dir + "/x.npy", dir + "/y.npy");
        // npy_touched: one pass over every value, as the fit's finite-value check makes.
        if (mode == "npy_touched")
            for (int64_t k = 0; k < d.x.size(); ++k) sum += d.x.data()[k];
        else
            sum = d.x.data()[0];
    }
    const double seconds = now_s() - t0, cpu = cpu_s() - c0;
    std::printf("%.6f %.6f %.2f %.2f %g\n", seconds, cpu, peak_rss_mb(), baseline, sum);
    return 0;
}

struct Load {
    double seconds = 0, cpu = 0, peak = 0, baseline = 0;
    bool ok = false;
};

Load run(const std::string& command) {
    Load load;
    FILE* p = popen(command.c_str(), "r");
    if (!p) return load;
    char line[256] = {};
    if (std::fgets(line, sizeof line, p))
        load.ok = std::sscanf(line, "%lf %lf %lf %lf", &load.seconds, &load.cpu, &load.peak, &load.baseline) == 4;
    if (pclose(p) != 0) load.ok = false;
    return load;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Series {
    std::vector<Load> loads;
    double seconds() const { std::vector<double> v; for (const Load& l : loads) v.push_back(l.seconds); return median(v); }
    double cpu() const { std::vector<double> v; for (const Load& l : loads) v.push_back(l.cpu); return median(v); }
    double peak() const { std::vector<double> v; for (const Load& l : loads) v.push_back(l.peak); return median(v); }
    double above_baseline() const { std::vector<double> v; for (const Load& l : loads) v.push_back(l.peak - l.baseline); return median(v); }
};

// Median over rounds of a / b, rounds where both ran.
double paired(const Series& a, const Series& b, bool invert) {
    std::vector<double> r;
    for (size_t i = 0; i < a.loads.size() && i < b.loads.size(); ++i)
        if (a.loads[i].ok && b.loads[i].ok)
            r.push_back(invert ? b.loads[i].seconds / a.loads[i].seconds : a.loads[i].seconds / b.loads[i].seconds);
    return median(r);
}

void print_series(const char* name, const Series& s, double bytes) {
    if (s.loads.empty()) return;
    std::printf("%s_load_ms: %.1f ms\n", name, 1e3 * s.seconds());
    std::printf("%s_load_cpu_ms: %.1f ms\n", name, 1e3 * s.cpu());
    if (bytes > 0) std::printf("%s_load_mb_per_s: %.1f MB/s\n", name, bytes / 1e6 / s.seconds());
    std::printf("%s_peak_rss_mb: %.1f MB\n", name, s.peak());
    std::printf("%s_peak_rss_above_start_mb: %.1f MB (%.2f x the float32 features)\n", name, s.above_baseline(),
                s.above_baseline() * 1e6 / kFeatureBytes);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "--child") return child(argv[2], argv[3]);
    const std::string dir = argc > 1 ? argv[1] : "bench-data";
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    if (!std::filesystem::exists(dir + "/data.csv")) generate(dir);
    const double csv_bytes = static_cast<double>(std::filesystem::file_size(dir + "/data.csv"));
    const double npy_bytes = static_cast<double>(std::filesystem::file_size(dir + "/x.npy") +
                                                 std::filesystem::file_size(dir + "/y.npy"));

    const char* env_python = std::getenv("PYTHON");
    const std::string python = env_python ? env_python : "python3";
    const std::string peer = std::string(ONEFIT_BENCH_DIR) + "/peers/load_peer.py";
    const std::string self = std::filesystem::canonical("/proc/self/exe").string();
    const auto has = [&](const char* module) {
        return std::system((python + " -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
    };
    const bool pyarrow = has("pyarrow.csv"), numpy = has("numpy");

    char cpu[128] = "unknown CPU";
    if (FILE* f = popen("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'", "r")) {
        if (std::fgets(cpu, sizeof cpu, f)) cpu[std::strcspn(cpu, "\n")] = 0;
        pclose(f);
    }
    std::printf("# data_load: %" PRId64 " x %" PRId64 " (CSV %.1f MB, .npy x+y %.1f MB), %d rounds, %s, %ld cores, "
                "load average %s",
                kRows, kFeatures, csv_bytes / 1e6, npy_bytes / 1e6, rounds, cpu, sysconf(_SC_NPROCESSORS_ONLN),
                [] {
                    static char avg[64] = "?\n";
                    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
                        if (!std::fgets(avg, sizeof avg, f)) std::strcpy(avg, "?\n");
                        std::fclose(f);
                    }
                    return avg;
                }());
    std::printf("# peers: pyarrow %s, numpy %s (%s)\n", pyarrow ? "yes" : "not installed", numpy ? "yes" : "not installed",
                python.c_str());
    std::fflush(stdout);
    // Warm the page cache: every figure is a warm read, as np.load's ~25 ms in the issue.
    for (const char* name : {"/data.csv", "/x.npy", "/y.npy"})
        std::system(("cat '" + dir + name + "' > /dev/null").c_str());

    Series csv, arrow, npy, npy_touched, np_load;
    for (int round = 0; round < rounds; ++round) {
        csv.loads.push_back(run("'" + self + "' --child csv '" + dir + "'"));
        if (pyarrow) arrow.loads.push_back(run(python + " '" + peer + "' pyarrow_csv '" + dir + "'"));
        npy.loads.push_back(run("'" + self + "' --child npy '" + dir + "'"));
        npy_touched.loads.push_back(run("'" + self + "' --child npy_touched '" + dir + "'"));
        if (numpy) np_load.loads.push_back(run(python + " '" + peer + "' numpy_npy '" + dir + "'"));
        for (const Series* s : {&csv, &arrow, &npy, &npy_touched, &np_load})
            if (!s->loads.empty() && !s->loads.back().ok) {
                std::fprintf(stderr, "bench_data_load: a load failed in round %d\n", round + 1);
                return 1;
            }
    }
    std::printf("# onefit: read_csv; read_npy_pair (x mapped in place, y converted from int64); npy_touched adds one "
                "pass over x, which pages it in. pyarrow: pyarrow.csv.read_csv (float64 columns, all cores). "
                "numpy: np.load of x and y.\n");
    print_series("csv", csv, csv_bytes);
    print_series("pyarrow_csv", arrow, csv_bytes);
    print_series("npy", npy, 0);
    print_series("npy_touched", npy_touched, 0);
    print_series("numpy_npy", np_load, 0);
    std::printf("csv_load_mb_per_s: %.1f MB/s\n", csv_bytes / 1e6 / csv.seconds());
    std::printf("npy_load_ms: %.1f ms\n", 1e3 * npy.seconds());
    if (pyarrow) std::printf("csv_speed_vs_pyarrow: %.2f x (paired median; > 1: onefit faster)\n", paired(csv, arrow, true));
    if (numpy) {
        std::printf("npy_time_vs_np_load: %.2f x (paired median; < 1: onefit faster)\n", paired(npy, np_load, false));
        std::printf("npy_touched_time_vs_np_load: %.2f x (paired median)\n", paired(npy_touched, np_load, false));
    }
    return 0;
}
