#!/usr/bin/env bash
# GPU runner set-up (docs/ci.md, "A GPU runner"): llama-cpp-python and llama-server built
# for the runner's GPU, each build kept in .cache/ (the CI's cache) under a key of the
# llama-cpp-python version and the GPU architectures, then extractbench doctor, and a stop
# when llama.cpp cannot offload (a gate must not run on the CPU by mistake).
set -euo pipefail
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$PWD/.cache}"  # llama-server's build lands here
python -m pip install --upgrade pip
pip install -e ".[dev]"  # the CPU llama-cpp-python first: it names the version to build
version=$(python -c "from importlib.metadata import version; print(version('llama-cpp-python'))")
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d . | sort -u | paste -sd';')
if [ -z "$arch" ]; then
  echo "ci/gpu-setup.sh: nvidia-smi reports no GPU on this runner" >&2
  exit 1
fi
wheels="$XDG_CACHE_HOME/llama-cuda/$version-sm${arch//;/-}"
export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$arch"
if ! ls "$wheels"/llama_cpp_python-*.whl > /dev/null 2>&1; then
  SECONDS=0
  pip wheel --no-deps --no-binary llama-cpp-python "llama-cpp-python==$version" -w "$wheels"
  echo "ci/gpu-setup.sh: llama-cpp-python $version built for sm $arch in ${SECONDS} s"
fi
pip install --force-reinstall --no-deps "$wheels"/llama_cpp_python-*.whl
extractbench server which > /dev/null || extractbench server build  # CMAKE_ARGS: CUDA
extractbench doctor | tee doctor.txt
python -c "import llama_cpp, sys; sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 1)" || {
  echo "ci/gpu-setup.sh: this llama-cpp-python cannot offload to the GPU (see doctor.txt)" >&2
  exit 1
}
