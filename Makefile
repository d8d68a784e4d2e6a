# Thin wrapper over CMake for the README's two commands.
#   make demo   install missing Debian packages (as root), build, run the main job
#   make check  -Werror + ASan/UBSan build, then every test under ctest
#   make install PREFIX=DIR   build, then install into DIR (default /usr/local)
BUILD       ?= build
CHECK_BUILD ?= build-check
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX      ?= /usr/local
DEB_PACKAGES = cmake make gcc clang clang-format pkg-config libjansson-dev libcmocka-dev \
               libcurl4-openssl-dev libsqlite3-dev sqlite3 chromium \
               libstarpu-dev openmpi-bin libopenmpi-dev libopenblas-dev \
               slurm-wlm munge

.PHONY: all demo check deps build install fuzz fuzz-run clean

all: build

deps:
	@sh tools/deps.sh $(DEB_PACKAGES)

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAPOPT_TESTS=OFF
	cmake --build $(BUILD) -j $(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

demo: build
	sh tools/demo.sh $(BUILD)/mapopt $(BUILD)/demo

check: deps
	cmake -S . -B $(CHECK_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMAPOPT_WERROR=ON \
	      -DMAPOPT_SANITIZE=ON -DMAPOPT_STARPU=ON
	cmake --build $(CHECK_BUILD) -j $(JOBS)
	cd $(CHECK_BUILD) && ctest --output-on-failure -j $(JOBS)

fuzz: deps
	CC=clang cmake -S . -B build-fuzz -DMAPOPT_FUZZ=ON -DMAPOPT_TESTS=OFF \
	      -DMAPOPT_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS)

# Every fuzz target FUZZ_SECONDS (default 60) in turn: tools/fuzz.sh.
FUZZ_SECONDS ?= 60
fuzz-run: fuzz
	sh tools/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(CHECK_BUILD) build-fuzz
