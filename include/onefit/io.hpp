// Files in and out: NumPy .npy and MNIST IDX arrays, safetensors weights, crash-safe writes.
// Every reader checks the whole file (its header, and its size against it) and throws
// onefit::Error naming the file and what is wrong before returning anything.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onefit/callbacks.hpp"  // Logs
#include "onefit/dataset.hpp"
#include "onefit/tensor.hpp"

namespace onefit {

// ---- Arrays ----

// A NumPy .npy file (format 1.0, 2.0 or 3.0, as np.save writes it) as a float32 tensor.
// Reads little-endian float (f2, f4, f8), integer (i1..i8, u1..u8) and bool (b1) dtypes and
// converts to float32 (f8 values beyond float32's range are refused; integers above 2^24 round).
// fortran_order=True arrays are transposed into row-major order, so values come out in
// numpy's C order either way. Refused: big-endian ('>f4'), structured and object dtypes,
// .npz archives (unpack with np.load and np.save each array), truncated files, trailing bytes.
// A float32 little-endian C-order array (what np.save writes for float32) is not copied: the file
// is mapped and the tensor shares the mapping (Tensor::shares_storage), paged in as it is read,
// like np.load(path, mmap_mode='r'); the file must not be truncated while the tensor lives.
// Other arrays are converted once, in chunks on all cores.
Tensor read_npy(const std::string& path);

// A MNIST-style IDX file (magic 00 00 TYPE NDIMS, big-endian u32 dims, big-endian values of
// type 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64) as a float32 tensor.
// The files must be uncompressed (gunzip the .gz downloads first). Pixels stay 0..255.
Tensor read_idx(const std::string& path);

// Features and labels from two array files: x of shape (N, ...) and y of shape (N,) or (N, 1).
// x of rank 1 becomes (N, 1); x of rank 3+ (images) is flattened to (N, H*W*...).
// Both files must hold the same number of rows. Feature and class names are left empty.
LabeledData read_npy_pair(const std::string& x_path, const std::string& y_path);
LabeledData read_idx_pair(const std::string& images_path, const std::string& labels_path);
// The same, each file .npy or IDX by its own format (detect_data_format): MNIST's IDX images with
// labels saved by NumPy, or the reverse.
LabeledData read_array_pair(const std::string& x_path, const std::string& y_path);

enum class DataFormat { csv, npy, idx };

// What a data file holds: by its first bytes (\x93NUMPY, or an IDX magic 00 00 TYPE NDIMS with
// a known type and 1..4 dimensions), else by its extension (.npy; .idx or a name ending in
// -ubyte), else csv. Never throws: an unreadable file is judged by its name, and the reader
// then reports why it cannot be opened.
DataFormat detect_data_format(const std::string& path);
const char* data_format_name(DataFormat format);  // "csv", "npy", "idx"

// ---- Weights ----

// Writes tensors as a safetensors file (what safetensors.numpy.load_file and
// safetensors.torch.load_file read): an 8-byte little-endian header length N, N bytes of JSON
// {"__metadata__": {...}, "name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...}
// padded with spaces to a multiple of 8, then the float32 data, little-endian, in the given
// order. Names must be unique, non-empty and not "__metadata__". Written atomically.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Reads a safetensors file, in the order of the data. F32 is read as is; F64, F16, BF16,
// integer and BOOL tensors are converted to float32. Checks everything: the header length
// against the file, the JSON, every dtype, shape and byte count, and that the data offsets
// tile the data region exactly (no overlap, gap or trailing byte). `metadata`, when given,
// receives "__metadata__".
std::vector<std::pair<std::string, Tensor>> read_safetensors(const std::string& path,
                                                             std::map<std::string, std::string>* metadata = nullptr);

// ---- Models ----

class Sequential;

// Where training stands, saved beside a model (state.json) so that a later fit resumes exactly:
// fit(..., FitOptions{.epochs = N, .initial_epoch = state.epoch, .seed = state.fit_seed}).
struct TrainingState {
    int64_t epoch = -1;          // epochs completed; -1: not known (saved without one)
    int64_t optimizer_step = 0;  // optimizer steps taken (restored into the model by load_model)
    uint64_t fit_seed = 0;       // the FitOptions::seed the fit ran with (shuffling and dropout)
};

// Saves a model as a folder (created if missing; its parent must exist):
//   model.safetensors      the Keras-layout weights, "LAYER/kernel" (in, out) and "LAYER/bias" (out,), F32
//   optimizer.safetensors  the optimizer slots "slot_0".. (compiled models only), each the model's
//                          parameter count long in get_weights order (metadata slot_order "keras")
//   config.json            {"format": "onefit-model", "format_version": 1, input_shape, seed, layers, loss,
//                           optimizer, metrics}
//   state.json             {"epoch", "optimizer_step", "fit_seed"}
// The whole folder is replaced at once: the files are written (each fsynced) into a temporary
// sibling folder which is then swapped with DIR (renameat2 RENAME_EXCHANGE), so a crash leaves
// the previous save or the new one, never a mix. Other files in DIR are kept. Where the file
// system cannot swap folders, the files are replaced one by one in the order above (weights
// first, state.json last) and every file carries the save's id, so load_model reports an
// interrupted save instead of mixing two. `epoch` < 0 records "not known"; fit_seed defaults to
// model.seed() (what fit uses when FitOptions::seed is not set).
void save_model(const Sequential& model, const std::string& dir, int64_t epoch = -1,
                std::optional<uint64_t> fit_seed = std::nullopt);
// Throws Error naming DIR unless save_model may write there: DIR is new, or a folder without an
// ensemble whose config.json, if it has one, is a onefit model's (which a save replaces; the
// folder's other files, dotfiles and subfolders included, are kept). save_model checks it; the
// CLI also checks before it trains.
void check_model_folder(const std::string& dir);

// Loads a folder save_model wrote: the architecture, the weights and, for a compiled model, the
// loss, optimizer, metrics, optimizer slots and step, so that fitting on continues exactly.
// Checks everything and throws Error naming the file and field.
Sequential load_model(const std::string& dir);
TrainingState load_training_state(const std::string& dir);  // state.json alone

// ---- Keras 3 files ----

// Keras 3's native format, which keras.saving.load_model reads and Keras's model.save writes: a zip
// of metadata.json, config.json (Keras's serialisation: a Sequential or Functional model, each
// layer's class and config, the compile config: loss, optimizer, metrics) and model.weights.h5 (each
// layer's arrays and the optimizer's state, HDF5 through libhdf5). Written atomically. onefit's own
// save_model and load_model take a path ending in .keras to mean this format. What Keras's format
// cannot hold is not kept: the epoch count and the fit's seed (state.json in a folder), and the
// model's seed; class_names ride in metadata.json, which Keras ignores.
void save_keras(const Sequential& model, const std::string& path);
// A .keras file that onefit or Keras 3 wrote: the model and its weights and, when the file has a
// compile config and `compile` is set, its loss, optimizer (settings and state, so that fitting goes
// on as Keras's would) and metrics. Throws Error naming the file and field of anything onefit cannot
// hold (a layer class it lacks, an argument away from what onefit supports, a shared layer).
Sequential load_keras(const std::string& path, bool compile = true);
// The weights alone, as Keras's model.save_weights("x.weights.h5") and model.load_weights: the
// layers' arrays by position in Keras's layer order (not by name, as Keras), and the optimizer's
// state when the model is compiled (and the file has it, for loading).
void save_weights_h5(const Sequential& model, const std::string& path);
void load_weights_h5(Sequential& model, const std::string& path);
bool is_keras_file(const std::string& path);  // ends in ".keras"

// ---- ONNX ----

// The model's predict as an ONNX model (opset 17, IR 8) that onnxruntime runs: one float32 input
// "input" of shape (batch, *input_shape) as Keras takes it (Embedding's indices as floats too; a
// model of several inputs has one each, "input", "input_1", ..., of their own shapes),
// one output "output" (batch, features); Dropout is the identity, BatchNormalization uses its
// moving statistics, as in predict. Checked with ONNX's checker, written atomically.
void export_onnx(const Sequential& model, const std::string& path);

// ---- Ensembles ----

// Several models of one input shape whose predictions are averaged (`onefit sweep --ensemble K`
// saves a sweep's top K). A folder: ensemble.json {"format": "onefit-ensemble",
// "format_version": 1, "members": ["members-ID/1", ...]} naming save_model folders inside it,
// best first. A save writes its members into a new members-ID folder, then switches
// ensemble.json to them in one atomic write, then removes older members-* folders: a crash
// leaves the previous ensemble or the new one, whole. DIR's parent must exist.
void save_ensemble(const std::vector<Sequential>& members, const std::string& dir);
std::vector<Sequential> load_ensemble(const std::string& dir);  // Error naming the file and field
bool is_ensemble(const std::string& dir);                       // DIR/ensemble.json exists
// The mean of the members' predictions (summed in double, in member order).
Tensor predict_ensemble(std::vector<Sequential>& members, const Tensor& x, int64_t batch_size = 32);
// The loss and metrics of that mean prediction against y (evaluate_predictions), as Keras
// evaluates an Average of the members: every member must be compiled with the same loss and
// metrics (Error naming the first that differs).
Logs evaluate_ensemble(std::vector<Sequential>& members, const Tensor& x, const Tensor& y, int64_t batch_size = 32);

// ---- Crash-safe writes ----

// Replaces `path` with `bytes` so that a crash or a full disk leaves either the old file or
// the new one, never a truncated mix: writes a temporary file beside it (.NAME.tmp.PID.N),
// fsyncs it, renames it over `path` and fsyncs the folder. An existing file keeps its
// permission bits. On failure the temporary file is removed and Error names the path, the
// step and the system's reason. A symbolic link at `path` is replaced, not followed.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace onefit
