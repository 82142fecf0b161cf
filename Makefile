# onefit: `make run` (set-up, build, the seed's Iris fit) and `make test` (set-up, build, every test).
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run test bench peers sanitize fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	bash scripts/python-env.sh $(BUILD)/pyenv
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DONEFIT_TEST_PYTHON=$(abspath $(BUILD))/pyenv/bin/python3 \
	  -DONEFIT_PYTHON=ON -DPython_EXECUTABLE=$(abspath $(BUILD))/pyenv/bin/python3 $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/onefit fit

# ctest, then the Python suite against the module this build made (build/python/onefit).
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	PYTHONPATH=$(abspath $(BUILD))/python $(BUILD)/pyenv/bin/python3 -m pytest -q -p no:cacheprovider python/tests

bench: build
	bash bench/run.sh $(BUILD)

peers: deps
	bash bench/peers/install.sh

sanitize: deps
	bash scripts/ci-sanitizers.sh

fuzz: deps
	bash scripts/ci-fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD)
