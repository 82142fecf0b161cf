// onefit._onefit: the C++ library's public API for Python (nanobind). Only plain conversions
// live here: arrays in and out, the model, fit's options and callbacks; the Keras-shaped names
// and defaults are Python (python/onefit/keras). Errors are translated once, at this boundary.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <memory>
#include <streambuf>
#include <type_traits>
#include <variant>
#include <string>
#include <vector>

#include "onefit/explain.hpp"
#include "onefit/onefit.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using onefit::Tensor;

// A C-contiguous float32 array on the CPU: Python converts anything else once before it comes here.
using FloatArray = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::numpy, float>;

// A layer argument from Python: None, bool, an integer (NumPy's too), a number, a string, or a
// list or tuple of integers; anything else is a TypeError naming the argument.
onefit::LayerValue layer_value(nb::handle v, const std::string& key) {
    if (v.is_none()) return std::monostate{};
    if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
    if (PyIndex_Check(v.ptr())) return nb::cast<int64_t>(nb::int_(v));
    if (PyFloat_Check(v.ptr()) || nb::hasattr(v, "__float__")) return nb::cast<double>(nb::float_(v));
    if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
    if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
        std::vector<int64_t> list;
        for (nb::handle d : v) {
            if (PyBool_Check(d.ptr()) || !PyIndex_Check(d.ptr()))
                throw nb::type_error((key + " must hold integers, not " + nb::repr(v).c_str()).c_str());
            list.push_back(nb::cast<int64_t>(nb::int_(d)));
        }
        return list;
    }
    throw nb::type_error((key + " must be a number, a string, a bool, None or a tuple of integers, not " +
                          nb::repr(v).c_str()).c_str());
}

onefit::LayerArguments layer_arguments(nb::dict arguments) {
    onefit::LayerArguments out;
    for (auto [key, value] : arguments) {
        const std::string name = nb::cast<std::string>(key);
        out.emplace_back(name, layer_value(value, name));
    }
    return out;
}

// A Keras schedule's get_config() value: None, a bool, an int, a float or a list of numbers.
onefit::ScheduleValue schedule_value(nb::handle v, const std::string& key) {
    if (v.is_none()) return std::monostate{};
    if (PyBool_Check(v.ptr())) return v.ptr() == Py_True;
    if (PyIndex_Check(v.ptr())) return nb::cast<int64_t>(nb::int_(v));
    if (PyFloat_Check(v.ptr()) || nb::hasattr(v, "__float__")) return nb::cast<double>(nb::float_(v));
    if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
        std::vector<double> list;
        for (nb::handle d : v) {
            if (PyBool_Check(d.ptr()) || !(PyIndex_Check(d.ptr()) || PyFloat_Check(d.ptr()) || nb::hasattr(d, "__float__")))
                throw nb::type_error((key + " must hold numbers, not " + nb::repr(v).c_str()).c_str());
            list.push_back(nb::cast<double>(nb::float_(d)));
        }
        return list;
    }
    throw nb::type_error((key + " must be a number, a bool, None or a list of numbers, not " + nb::repr(v).c_str()).c_str());
}

onefit::LearningRateSchedule make_schedule(const std::string& class_name, nb::dict config) {
    onefit::ScheduleArguments arguments;
    for (auto [key, value] : config) {
        const std::string name = nb::cast<std::string>(key);
        if (name != "name") arguments.emplace_back(name, schedule_value(value, name));
    }
    return onefit::make_schedule(class_name, arguments);
}

nb::object python_value(const onefit::LayerValue& v) {
    return std::visit([](const auto& x) -> nb::object {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return nb::none();
        else return nb::cast(x);
    }, v);
}

nb::dict arguments_dict(const onefit::Layer& l) {
    nb::dict arguments;
    for (const auto& [name, value] : onefit::layer_arguments(l)) arguments[name.c_str()] = python_value(value);
    return arguments;
}

// {"kind": "Dense", "type": "dense", "name": "" (a default name), "arguments": {...}}.
nb::dict layer_info(const onefit::Layer& l) {
    nb::dict d;
    d["kind"] = onefit::layer_class_name(l.kind);
    d["type"] = onefit::layer_type(l.kind);
    d["name"] = l.name;
    d["arguments"] = arguments_dict(l);
    d["inputs"] = l.inputs;  // a Functional layer's (empty: the previous layer's output)
    d["shares"] = l.shares;  // a shared layer's later call: its first call's index (else -1)
    return d;
}

// The array's values without a copy: the tensor keeps the array alive through a reference that
// is dropped, with the GIL held, when the last copy of the tensor goes.
Tensor tensor_view(const FloatArray& array) {
    onefit::Shape shape;
    for (size_t i = 0; i < array.ndim(); ++i) shape.push_back(static_cast<int64_t>(array.shape(i)));
    if (shape.empty()) shape.push_back(1);
    auto* owner = new FloatArray(array);
    std::shared_ptr<const float> values(array.data(), [owner](const float*) {
        nb::gil_scoped_acquire gil;
        delete owner;
    });
    return Tensor(std::move(shape), std::move(values));
}

OutArray to_numpy(Tensor tensor) {
    auto* owned = new Tensor(std::move(tensor));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
    std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
    return OutArray(owned->data(), shape.size(), shape.data(), owner);
}

nb::dict to_dict(const onefit::Logs& logs) {
    nb::dict d;
    for (const auto& [k, v] : logs) d[k.c_str()] = v;
    return d;
}

// The first Python error of a fit (a callback's exception, or KeyboardInterrupt), held rather
// than left pending, so that Python keeps running normally (the next epoch line is still
// written) until fit returns and raises it. Setting it asks the model to stop after this epoch.
struct FitError {
    std::optional<nb::python_error> error;
    onefit::Sequential* model = nullptr;
    void set(nb::python_error& e) {
        if (!error) error.emplace(std::move(e));
        if (model) model->stop_training = true;
    }
};

// fit's text output into Python's sys.stdout (so Jupyter shows it), a line or a flush at a time.
// Writing runs Python (ipykernel's stream), where a pending Ctrl-C surfaces: it stops the fit.
class PythonStdout : public std::streambuf {
public:
    explicit PythonStdout(FitError& failure) : failure_(failure) {}
    ~PythonStdout() override { sync(); }

protected:
    int overflow(int c) override {
        if (c != traits_type::eof()) {
            text_ += static_cast<char>(c);
            if (c == '\n' || c == '\r') sync();
        }
        return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        text_.append(s, static_cast<size_t>(n));
        if (text_.find_first_of("\n\r") != std::string::npos) sync();
        return n;
    }
    int sync() override {
        if (text_.empty()) return 0;
        nb::gil_scoped_acquire gil;
        try {
            nb::object out = nb::module_::import_("sys").attr("stdout");
            if (!out.is_none()) {
                out.attr("write")(text_);
                out.attr("flush")();
            }
        } catch (nb::python_error& e) {
            if (e.matches(PyExc_Exception)) e.discard_as_unraisable("onefit: writing to sys.stdout");
            else failure_.set(e);  // KeyboardInterrupt, SystemExit: the user's, not the stream's
        }
        text_.clear();
        return 0;
    }

private:
    std::string text_;
    FitError& failure_;
};

// A Python object's on_train_begin/on_epoch_begin/on_epoch_end/on_train_end, called with the
// GIL held. A Python exception stops training after that epoch and is raised when fit returns.
// The same check looks for Ctrl-C (KeyboardInterrupt) at every epoch end.
class PythonCallback : public onefit::Callback {
public:
    PythonCallback(nb::object target, FitError& failure) : target_(std::move(target)), failure_(failure) {}
    void on_train_begin() override { call("on_train_begin"); }
    void on_epoch_begin(int64_t epoch) override { call("on_epoch_begin", epoch); }
    void on_epoch_end(int64_t epoch, const onefit::Logs& logs) override { call("on_epoch_end", epoch, &logs); }
    void on_train_end(const onefit::Logs& logs) override { call("on_train_end", -1, &logs); }

private:
    void call(const char* name, int64_t epoch = -1, const onefit::Logs* logs = nullptr) {
        if (failure_.error) return;
        nb::gil_scoped_acquire gil;
        try {
            if (!target_.is_none() && nb::hasattr(target_, name)) {
                nb::object method = target_.attr(name);
                if (logs && epoch >= 0) method(epoch, to_dict(*logs));
                else if (logs) method(to_dict(*logs));
                else if (epoch >= 0) method(epoch);
                else method();
            }
            if (PyErr_CheckSignals() != 0) throw nb::python_error();
        } catch (nb::python_error& e) {
            failure_.set(e);
        }
    }
    nb::object target_;
    FitError& failure_;
};

// Runs `fit(options)` with the GIL released, the Python callbacks and Ctrl-C checked at every
// epoch end, and the text output going to sys.stdout (or, on a terminal, straight to the tty so
// the live progress bar works). Returns (history, epochs).
// python_callbacks None: no Python hooks and a fit too short to need Ctrl-C at epoch ends, which
// then runs as one program call (Python raises a pending KeyboardInterrupt when fit returns).
template <class Fit>
nb::tuple run_fit(onefit::Sequential& model, onefit::FitOptions options, const nb::list& callbacks,
                  const nb::object& python_callbacks, bool to_python_stdout, Fit&& fit) {
    options.print_warnings = false;
    for (nb::handle c : callbacks) options.callbacks.push_back(nb::cast<onefit::Callback*>(c));
    FitError failure{std::nullopt, &model};
    PythonCallback hooks(python_callbacks, failure);
    if (!python_callbacks.is_none()) options.callbacks.push_back(&hooks);  // last: sees what the others set
    PythonStdout buffer(failure);
    std::ostream out(&buffer);
    if (to_python_stdout) options.out = &out;
    onefit::History history;
    {
        nb::gil_scoped_release release;
        history = fit(options);
        out.flush();
    }
    if (failure.error) throw *failure.error;
    return nb::make_tuple(history.history, history.epoch);
}

}  // namespace

NB_MODULE(_onefit, m) {
    m.doc() = "onefit's C++ core; use onefit.keras";
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const onefit::Error& e) {
            const std::string what = e.what();
            // A missing file or folder is FileNotFoundError, as open() would raise; the text stays onefit's.
            std::string lower = what;
            for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const bool missing = lower.find("no such file") != std::string::npos ||
                                 lower.find("no such folder") != std::string::npos ||
                                 lower.find("does not exist") != std::string::npos;
            PyErr_SetString(missing ? PyExc_FileNotFoundError : PyExc_ValueError, what.c_str());
        }
    });

    m.attr("__version__") = ONEFIT_VERSION;

    nb::class_<onefit::Optimizer>(m, "Optimizer")
        .def("__init__", [](onefit::Optimizer* o, const std::string& name) {
            new (o) onefit::Optimizer(onefit::optimizer_from_name(name));
        }, "name"_a)
        .def_rw("learning_rate", &onefit::Optimizer::learning_rate)
        .def_rw("beta_1", &onefit::Optimizer::beta_1)
        .def_rw("beta_2", &onefit::Optimizer::beta_2)
        .def_rw("epsilon", &onefit::Optimizer::epsilon)
        .def_rw("amsgrad", &onefit::Optimizer::amsgrad)
        .def_rw("weight_decay", &onefit::Optimizer::weight_decay)
        .def_rw("momentum", &onefit::Optimizer::momentum)
        .def_rw("nesterov", &onefit::Optimizer::nesterov)
        .def_rw("rho", &onefit::Optimizer::rho)
        .def_rw("centered", &onefit::Optimizer::centered)
        .def_rw("initial_accumulator_value", &onefit::Optimizer::initial_accumulator_value)
        .def_rw("clipnorm", &onefit::Optimizer::clipnorm)
        .def_rw("global_clipnorm", &onefit::Optimizer::global_clipnorm)
        .def_rw("clipvalue", &onefit::Optimizer::clipvalue)
        .def_prop_ro("name", [](const onefit::Optimizer& o) { return onefit::optimizer_name(o.kind); })
        // A Keras learning-rate schedule by its class name and get_config(); learning_rate becomes its step-0 rate.
        .def("set_schedule", [](onefit::Optimizer& o, const std::string& class_name, nb::dict config) {
            o.learning_rate_schedule = make_schedule(class_name, config);
            o.learning_rate = static_cast<float>(onefit::scheduled_learning_rate(o.learning_rate_schedule, 0));
        }, "class_name"_a, "config"_a)
        // (class_name, config) of its schedule, or None for a constant rate.
        .def("schedule", [](const onefit::Optimizer& o) -> nb::object {
            if (o.learning_rate_schedule.kind == onefit::ScheduleKind::constant) return nb::none();
            nb::dict config;
            for (const auto& [key, value] : onefit::schedule_arguments(o.learning_rate_schedule))
                config[key.c_str()] = std::visit([](const auto& x) -> nb::object {
                    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return nb::none();
                    else return nb::cast(x);
                }, value);
            return nb::make_tuple(onefit::schedule_name(o.learning_rate_schedule.kind), config);
        });
    // A schedule's rate at a step, with the fit's own formula (the Python schedules' __call__).
    m.def("scheduled_learning_rate", [](const std::string& class_name, nb::dict config, int64_t step) {
        return onefit::scheduled_learning_rate(make_schedule(class_name, config), step);
    }, "class_name"_a, "config"_a, "step"_a);

    nb::class_<onefit::Loss>(m, "Loss")
        .def("__init__", [](onefit::Loss* l, const std::string& name, bool from_logits, float delta, float label_smoothing) {
            new (l) onefit::Loss(onefit::loss_from_name(name, from_logits));
            l->delta = delta;
            l->label_smoothing = label_smoothing;
        }, "name"_a, "from_logits"_a = false, "delta"_a = 1.0f, "label_smoothing"_a = 0.0f)
        .def_ro("from_logits", &onefit::Loss::from_logits)
        .def_ro("delta", &onefit::Loss::delta)
        .def_ro("label_smoothing", &onefit::Loss::label_smoothing)
        .def_prop_ro("name", [](const onefit::Loss& l) { return onefit::loss_name(l.kind); });

    nb::class_<onefit::Callback>(m, "NativeCallback");
    nb::class_<onefit::EarlyStopping, onefit::Callback>(m, "EarlyStopping")
        .def(nb::init<std::string, double, int64_t, std::string, bool, int64_t, std::optional<double>>(),
             "monitor"_a, "min_delta"_a, "patience"_a, "mode"_a, "restore_best_weights"_a, "start_from_epoch"_a,
             "baseline"_a.none())
        .def_rw("verbose", &onefit::EarlyStopping::verbose)
        .def_ro("stopped_epoch", &onefit::EarlyStopping::stopped_epoch)
        .def_ro("best_epoch", &onefit::EarlyStopping::best_epoch)
        .def_ro("wait", &onefit::EarlyStopping::wait);
    nb::class_<onefit::ModelCheckpoint, onefit::Callback>(m, "ModelCheckpoint")
        .def(nb::init<std::string, std::string, bool, std::string, int, bool>(), "filepath"_a, "monitor"_a,
             "save_best_only"_a, "mode"_a, "verbose"_a, "save_weights_only"_a)
        .def_ro("last_saved", &onefit::ModelCheckpoint::last_saved);
    nb::class_<onefit::CSVLogger, onefit::Callback>(m, "CSVLogger")
        .def(nb::init<std::string, std::string, bool>(), "filename"_a, "separator"_a, "append"_a);

    // fit's options, one object per fit or explain call (onefit.keras.models._fit_options fills it);
    // callbacks and the output stream are set by run_fit.
    nb::class_<onefit::FitOptions>(m, "FitOptions")
        .def(nb::init<>())
        .def_rw("batch_size", &onefit::FitOptions::batch_size)
        .def_rw("epochs", &onefit::FitOptions::epochs)
        .def_rw("initial_epoch", &onefit::FitOptions::initial_epoch)
        .def_rw("verbose", &onefit::FitOptions::verbose)
        .def_rw("validation_dataset", &onefit::FitOptions::validation_dataset)
        .def_rw("validation_split", &onefit::FitOptions::validation_split)
        .def_rw("validation_batch_size", &onefit::FitOptions::validation_batch_size)
        .def_rw("steps_per_epoch", &onefit::FitOptions::steps_per_epoch)
        .def_rw("shuffle", &onefit::FitOptions::shuffle)
        .def_rw("seed", &onefit::FitOptions::seed)
        .def_prop_rw("device", [](const onefit::FitOptions& o) { return onefit::device_name(o.device); },
                     [](onefit::FitOptions& o, const std::string& name) { o.device = onefit::device_from_name(name); })
        .def("set_validation_data", [](onefit::FitOptions& o, const FloatArray& x, const FloatArray& y) {
            o.validation_data = std::make_pair(tensor_view(x), tensor_view(y));
        }, "x"_a, "y"_a)
        .def("set_sample_weight", [](onefit::FitOptions& o, const FloatArray& w) { o.sample_weight = tensor_view(w); },
             "sample_weight"_a)
        .def("set_validation_sample_weight",
             [](onefit::FitOptions& o, const FloatArray& w) { o.validation_sample_weight = tensor_view(w); },
             "sample_weight"_a);

    nb::class_<onefit::Sequential>(m, "Sequential")
        .def("__init__", [](onefit::Sequential* s, std::vector<int64_t> input_shape, uint64_t seed) {
            new (s) onefit::Sequential(std::move(input_shape), seed);
        }, "input_shape"_a, "seed"_a)
        .def_static("with_inputs", [](std::vector<std::vector<int64_t>> input_shapes, uint64_t seed) {
            return onefit::Sequential::with_inputs(std::move(input_shapes), seed);
        }, "input_shapes"_a, "seed"_a)
        // Any layer kind by its declaration: its word ("dense"), Keras's argument names and values.
        // inputs: a Functional layer's (onefit::Layer::inputs), empty for the previous layer's output.
        .def("add_layer", [](onefit::Sequential& s, const std::string& type, nb::dict arguments, const std::string& name,
                             std::vector<int32_t> inputs) {
            onefit::Layer layer = onefit::make_layer(type, layer_arguments(arguments), name);
            layer.inputs = std::move(inputs);
            s.add(std::move(layer));
        }, "type"_a, "arguments"_a, "name"_a, "inputs"_a = std::vector<int32_t>{})
        // A shared layer called again: layer `first`'s arguments and weights on these inputs.
        .def("share_layer", [](onefit::Sequential& s, size_t first, std::vector<int32_t> inputs) {
            s.add(onefit::shared_call(s.layers(), first, std::move(inputs)));
        }, "first"_a, "inputs"_a)
        .def("compile", [](onefit::Sequential& s, const onefit::Optimizer& optimizer, const onefit::Loss& loss,
                           std::vector<std::string> metrics) {
            s.compile(optimizer, loss, onefit::CompileOptions{std::move(metrics)});
        }, "optimizer"_a, "loss"_a, "metrics"_a)
        .def("fit", [](onefit::Sequential& s, const FloatArray& x, const FloatArray& y,
                       const onefit::FitOptions& options, nb::list callbacks, nb::object python_callbacks,
                       bool to_python_stdout) {
            const Tensor xt = tensor_view(x), yt = tensor_view(y);
            return run_fit(s, options, callbacks, python_callbacks, to_python_stdout,
                           [&](const onefit::FitOptions& o) { return s.fit(xt, yt, o); });
        }, "x"_a, "y"_a, "options"_a, "callbacks"_a, "python_callbacks"_a.none(), "to_python_stdout"_a)
        .def("fit_dataset", [](onefit::Sequential& s, const onefit::Dataset& train, const onefit::FitOptions& options,
                               nb::list callbacks, nb::object python_callbacks, bool to_python_stdout) {
            return run_fit(s, options, callbacks, python_callbacks, to_python_stdout,
                           [&](const onefit::FitOptions& o) { return s.fit(train, o); });
        }, "train"_a, "options"_a, "callbacks"_a, "python_callbacks"_a.none(), "to_python_stdout"_a)
        .def("evaluate", [](onefit::Sequential& s, const FloatArray& x, const FloatArray& y, int64_t batch_size,
                            std::optional<FloatArray> sample_weight) {
            const Tensor xt = tensor_view(x), yt = tensor_view(y);
            const std::optional<Tensor> wt = sample_weight ? std::optional<Tensor>(tensor_view(*sample_weight)) : std::nullopt;
            onefit::Logs logs;
            {
                nb::gil_scoped_release release;
                logs = s.evaluate(xt, yt, batch_size, wt ? &*wt : nullptr);
            }
            return logs;
        }, "x"_a, "y"_a, "batch_size"_a, "sample_weight"_a = nb::none())
        .def("predict", [](onefit::Sequential& s, const FloatArray& x, int64_t batch_size) {
            const Tensor xt = tensor_view(x);
            Tensor out;
            {
                nb::gil_scoped_release release;
                out = s.predict(xt, batch_size);
            }
            return to_numpy(std::move(out));
        }, "x"_a, "batch_size"_a)
        .def("get_weights", [](const onefit::Sequential& s) {
            nb::list out;
            for (Tensor& t : s.get_weights()) out.append(to_numpy(std::move(t)));
            return out;
        })
        .def("set_weights", [](onefit::Sequential& s, std::vector<FloatArray> arrays) {
            std::vector<Tensor> weights;
            for (const FloatArray& a : arrays) weights.push_back(tensor_view(a));
            s.set_weights(weights);
        }, "weights"_a)
        .def("set_learning_rate", &onefit::Sequential::set_learning_rate, "learning_rate"_a)
        .def_prop_ro("metrics", &onefit::Sequential::metrics)
        .def("summary", &onefit::Sequential::summary)
        .def("output_shape", &onefit::Sequential::output_shape)
        .def("layer_names", &onefit::Sequential::layer_names)
        .def("count_params", &onefit::Sequential::count_params)
        .def("save", &onefit::Sequential::save, "dir"_a)
        .def("save_weights_h5", [](const onefit::Sequential& s, const std::string& path) {
            onefit::save_weights_h5(s, path);
        }, "path"_a)
        .def("load_weights_h5", [](onefit::Sequential& s, const std::string& path) {
            onefit::load_weights_h5(s, path);
        }, "path"_a)
        .def("export_onnx", [](const onefit::Sequential& s, const std::string& path) { onefit::export_onnx(s, path); },
             "path"_a)
        .def("warnings", [](const onefit::Sequential& s) { return s.warnings(); })
        .def_prop_ro("input_shape", [](const onefit::Sequential& s) { return s.input_shape(); })
        .def_prop_ro("input_shapes", [](const onefit::Sequential& s) { return s.input_shapes(); })
        .def_prop_ro("seed", &onefit::Sequential::seed)
        .def_rw("stop_training", &onefit::Sequential::stop_training)
        .def_rw("name", &onefit::Sequential::name)
        .def_rw("input_names", &onefit::Sequential::input_names)
        .def_prop_ro("loss", [](const onefit::Sequential& s) { return s.loss(); })
        .def_prop_ro("optimizer", [](const onefit::Sequential& s) { return s.optimizer(); })
        .def_prop_ro("layers", [](const onefit::Sequential& s) {
            nb::list out;
            for (const onefit::Layer& l : s.layers()) out.append(layer_info(l));
            return out;
        });

    // The kinds' declarations, from which onefit.keras.layers makes its classes and checks.
    m.def("layer_kinds", [] {
        nb::list out;
        for (const onefit::LayerKindDescription& k : onefit::layer_kinds()) {
            nb::dict d;
            d["type"] = k.type, d["keras_class"] = k.keras_class, d["arguments"] = k.arguments, d["required"] = k.required;
            out.append(d);
        }
        return out;
    });
    // The layer's arguments as make_layer reads them (pairs and shapes as lists), or its Error.
    m.def("check_layer", [](const std::string& type, nb::dict arguments) {
        return arguments_dict(onefit::make_layer(type, layer_arguments(arguments)));
    }, "type"_a, "arguments"_a);

    nb::class_<onefit::Dataset>(m, "Dataset")
        .def_static("from_tensor_slices", [](const FloatArray& x, const FloatArray& y) {
            return onefit::Dataset::from_tensor_slices(tensor_view(x), tensor_view(y));
        }, "x"_a, "y"_a)
        .def_static("from_tensor_slices", [](const FloatArray& x, const FloatArray& y, const FloatArray& w) {
            return onefit::Dataset::from_tensor_slices(tensor_view(x), tensor_view(y), tensor_view(w));
        }, "x"_a, "y"_a, "sample_weight"_a)
        .def("with_sample_weight", [](const onefit::Dataset& d, const FloatArray& w) {
            return d.with_sample_weight(tensor_view(w));
        }, "sample_weight"_a)
        .def("shuffle", &onefit::Dataset::shuffle, "buffer_size"_a, "seed"_a, "reshuffle_each_iteration"_a)
        .def("batch", &onefit::Dataset::batch, "batch_size"_a, "drop_remainder"_a)
        .def("repeat", &onefit::Dataset::repeat, "count"_a)
        .def("take", &onefit::Dataset::take, "count"_a)
        .def("cardinality", &onefit::Dataset::cardinality)
        .def("is_batched", &onefit::Dataset::is_batched)
        // The rows of one pass and its batch sizes (Python gathers the arrays it iterates).
        .def("plan", [](const onefit::Dataset& d, int64_t iteration, int64_t max_batches) {
            onefit::DatasetPass pass;
            d.plan(iteration, max_batches, pass);
            return nb::make_tuple(pass.rows, pass.batch_sizes);
        }, "iteration"_a, "max_batches"_a);

    // explain: one profiled fit and its report, as (json, text, html).
    m.def("explain_fit", [](onefit::Sequential& s, const FloatArray& x, const FloatArray& y,
                            onefit::FitOptions options, std::string run, bool recalibrate) {
        const Tensor xt = tensor_view(x), yt = tensor_view(y);
        std::optional<std::pair<Tensor, Tensor>> validation = std::move(options.validation_data);
        options.validation_data.reset();  // explain_fit takes them apart
        options.verbose = 0;
        std::string json, text, html;
        {
            nb::gil_scoped_release release;
            const onefit::ExplainReport report =
                onefit::explain_fit(s, xt, yt, validation ? &validation->first : nullptr,
                                    validation ? &validation->second : nullptr, options, {}, std::move(run),
                                    recalibrate);
            json = onefit::explain_json(report), text = onefit::explain_text(report), html = onefit::explain_html(report);
        }
        return nb::make_tuple(json, text, html);
    }, "model"_a, "x"_a, "y"_a, "options"_a, "run"_a, "recalibrate"_a);

    // sweep: the members of a learning-rate x seed grid, or of explicit points, each once or per
    // fold, as (learning_rate, seed, fold, history, weights).
    m.def("sweep", [](const onefit::Sequential& s, const onefit::Optimizer& optimizer, const onefit::Loss& loss,
                      std::vector<std::string> metrics, const FloatArray& x, const FloatArray& y,
                      const onefit::FitOptions& options, std::vector<float> learning_rates,
                      std::vector<uint64_t> seeds, const std::vector<std::pair<float, uint64_t>>& points,
                      std::vector<std::string> optimizers, std::vector<std::string> losses, std::vector<int64_t> units,
                      std::vector<float> dropouts,
                      std::vector<int64_t> batch_sizes, std::vector<int64_t> epochs, int64_t folds,
                      int64_t shuffle_splits, double split_size, int64_t bootstraps, uint64_t split_seed,
                      bool shuffle_folds) {
        const Tensor xt = tensor_view(x), yt = tensor_view(y);
        onefit::SweepGrid grid{std::move(learning_rates), std::move(seeds)};
        for (const auto& [rate, seed] : points) grid.points.push_back({rate, seed});
        grid.optimizers = std::move(optimizers), grid.losses = std::move(losses), grid.hidden_units = std::move(units);
        grid.dropout_rates = std::move(dropouts), grid.batch_sizes = std::move(batch_sizes);
        grid.epochs = std::move(epochs), grid.folds = folds;
        grid.shuffle_splits = shuffle_splits, grid.split_test_size = split_size, grid.bootstraps = bootstraps;
        grid.split_seed = split_seed;
        if (shuffle_folds) grid.fold_shuffle_seed = split_seed;
        std::vector<onefit::SweepMember> members;
        {
            nb::gil_scoped_release release;
            members = onefit::sweep(s, optimizer, loss, onefit::CompileOptions{std::move(metrics)}, xt, yt, options, grid);
        }
        nb::list out;
        for (onefit::SweepMember& m : members) {
            nb::list weights;
            for (Tensor& t : m.weights) weights.append(to_numpy(std::move(t)));
            nb::dict config;
            config["optimizer"] = m.optimizer, config["batch_size"] = m.batch_size, config["epochs"] = m.epochs;
            config["loss_function"] = m.loss;
            if (m.hidden_units) config["units"] = m.hidden_units;
            if (m.dropout_rate >= 0) config["dropout"] = m.dropout_rate;
            out.append(nb::make_tuple(m.learning_rate, m.seed, m.fold, config, m.history.history, weights));
        }
        return out;
    }, "model"_a, "optimizer"_a, "loss"_a, "metrics"_a, "x"_a, "y"_a, "options"_a, "learning_rates"_a, "seeds"_a,
       "points"_a, "optimizers"_a, "losses"_a, "units"_a, "dropouts"_a, "batch_sizes"_a, "epochs"_a, "folds"_a,
       "shuffle_splits"_a, "split_size"_a, "bootstraps"_a, "split_seed"_a, "shuffle_folds"_a);
    m.def("random_points", [](int64_t count, float low, float high, bool log_scale, uint64_t first_seed,
                              uint64_t draw_seed) {
        std::vector<std::pair<float, uint64_t>> out;
        for (const onefit::SweepPoint& p : onefit::random_points(count, low, high, log_scale, first_seed, draw_seed))
            out.emplace_back(p.learning_rate, p.seed);
        return out;
    }, "count"_a, "low"_a, "high"_a, "log_scale"_a, "first_seed"_a, "draw_seed"_a);

    m.def("load_model", [](const std::string& dir) { return onefit::load_model(dir); }, "dir"_a);
    m.def("load_keras", [](const std::string& path, bool compile) { return onefit::load_keras(path, compile); },
          "path"_a, "compile"_a);
    m.def("cpu_simd_target", &onefit::cpu_simd_target);
    m.def("cuda_available", [] { return onefit::cuda_available(); });
}
