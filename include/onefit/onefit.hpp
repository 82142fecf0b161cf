// onefit: Keras-style training of dense networks, the whole fit as one compiled program.
#pragma once
#include "onefit/callbacks.hpp"
#include "onefit/dataset.hpp"
#include "onefit/device.hpp"
#include "onefit/error.hpp"
#include "onefit/functional.hpp"
#include "onefit/io.hpp"
#include "onefit/layers.hpp"
#include "onefit/losses.hpp"
#include "onefit/model.hpp"
#include "onefit/optimizers.hpp"
#include "onefit/sweep.hpp"
#include "onefit/tensor.hpp"
