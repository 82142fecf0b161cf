// save_ensemble / load_ensemble / predict_ensemble: a sweep's top members kept together and
// averaged (layout in onefit/io.hpp). Each save writes its members into a folder of its own
// and then switches ensemble.json to it in one atomic write, so a crash leaves the previous
// ensemble or the new one, whole; older members' folders are removed only after the switch.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "onefit/error.hpp"
#include "onefit/io.hpp"
#include "onefit/model.hpp"

namespace onefit {
namespace {

namespace fs = std::filesystem;
constexpr const char* kEnsembleFile = "ensemble.json";
constexpr const char* kFormat = "onefit-ensemble";
constexpr int kFormatVersion = 1;

std::string save_id() {
    std::random_device device;
    std::ostringstream id;
    id << std::hex << device() << device();
    return id.str();
}

}  // namespace

bool is_ensemble(const std::string& dir) { return fs::is_regular_file(fs::path(dir) / kEnsembleFile); }

void save_ensemble(const std::vector<Sequential>& members, const std::string& dir) {
    if (members.empty()) throw Error("save_ensemble " + dir + ": no members to save");
    std::error_code error;
    fs::create_directory(dir, error);
    if (error || !fs::is_directory(dir))
        throw Error("save_ensemble " + dir + ": cannot create the folder (" + error.message() + ")");
    const std::string folder = "members-" + save_id();
    fs::create_directory(fs::path(dir) / folder, error);
    if (error) throw Error("save_ensemble " + dir + ": cannot create " + folder + " (" + error.message() + ")");
    nlohmann::json index{{"format", kFormat}, {"format_version", kFormatVersion}, {"members", nlohmann::json::array()}};
    for (size_t k = 0; k < members.size(); ++k) {
        const std::string name = folder + "/" + std::to_string(k + 1);
        save_model(members[k], (fs::path(dir) / name).string());
        index["members"].push_back(name);
    }
    write_file_atomically((fs::path(dir) / kEnsembleFile).string(), index.dump(2) + "\n");
    for (const fs::directory_entry& e : fs::directory_iterator(dir, error))  // the previous saves' members
        if (e.is_directory() && e.path().filename().string().rfind("members-", 0) == 0 && e.path().filename() != folder)
            fs::remove_all(e.path(), error);
}

std::vector<Sequential> load_ensemble(const std::string& dir) {
    const std::string path = (fs::path(dir) / kEnsembleFile).string();
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open (not an ensemble folder?)");
    nlohmann::json index;
    try {
        index = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        throw Error(path + ": not valid JSON: " + e.what());
    }
    if (!index.is_object() || index.value("format", "") != kFormat)
        throw Error(path + ": \"format\" must be \"" + kFormat + "\"");
    if (!index.contains("format_version") || index["format_version"] != kFormatVersion)
        throw Error(path + ": \"format_version\" must be " + std::to_string(kFormatVersion));
    if (!index.contains("members") || !index["members"].is_array() || index["members"].empty())
        throw Error(path + ": \"members\" must be a non-empty list of member folders");
    std::vector<Sequential> members;
    for (const nlohmann::json& name : index["members"]) {
        if (!name.is_string() || name.get<std::string>().find("..") != std::string::npos ||
            fs::path(name.get<std::string>()).is_absolute())
            throw Error(path + ": \"members\" holds " + name.dump() + "; each must be a folder inside " + dir);
        members.push_back(load_model((fs::path(dir) / name.get<std::string>()).string()));
        if (members.back().input_shape() != members.front().input_shape())
            throw Error(path + ": member " + name.get<std::string>() + " takes another input shape than the first");
    }
    return members;
}

Tensor predict_ensemble(std::vector<Sequential>& members, const Tensor& x, int64_t batch_size) {
    if (members.empty()) throw Error("predict_ensemble: no members");
    Tensor mean = members.front().predict(x, batch_size);
    std::vector<double> sum(mean.data(), mean.data() + mean.size());
    for (size_t k = 1; k < members.size(); ++k) {
        const Tensor out = members[k].predict(x, batch_size);
        if (out.shape() != mean.shape())
            throw Error("predict_ensemble: member " + std::to_string(k + 1) + " predicts shape " +
                        shape_to_string(out.shape()) + ", the first " + shape_to_string(mean.shape()));
        for (int64_t i = 0; i < out.size(); ++i) sum[static_cast<size_t>(i)] += out.data()[i];
    }
    for (int64_t i = 0; i < mean.size(); ++i)
        mean.data()[i] = static_cast<float>(sum[static_cast<size_t>(i)] / static_cast<double>(members.size()));
    return mean;
}

Logs evaluate_ensemble(std::vector<Sequential>& members, const Tensor& x, const Tensor& y, int64_t batch_size) {
    if (members.empty()) throw Error("evaluate_ensemble: no members");
    const auto compiled = [&](size_t k) -> const Sequential& {
        try {
            members[k].program();
        } catch (const Error&) {
            throw Error("evaluate_ensemble: member " + std::to_string(k + 1) + " was saved without a loss (before compile)");
        }
        return members[k];
    };
    const Sequential& first = compiled(0);
    for (size_t k = 1; k < members.size(); ++k) {
        const Sequential& m = compiled(k);
        if (m.loss().kind != first.loss().kind || m.loss().from_logits != first.loss().from_logits ||
            m.loss().delta != first.loss().delta || m.metrics() != first.metrics())
            throw Error("evaluate_ensemble: member " + std::to_string(k + 1) + " is compiled with " +
                        loss_name(m.loss().kind) + " and " + std::to_string(m.metrics().size()) +
                        " metrics, member 1 with " + loss_name(first.loss().kind) + " and " +
                        std::to_string(first.metrics().size()) + ": their mean has no one loss");
    }
    return first.evaluate_predictions(predict_ensemble(members, x, batch_size), y);
}

}  // namespace onefit
