#!/usr/bin/env bash
# Gradescope runs this once, when the autograder image is built (Debian or Ubuntu, as root). It
# installs what grading needs from the distribution's packages. The CUDA toolkit must already be in
# the image (a base image with it); grading also needs a GPU and its driver where the submissions
# run: without one, every exercise reports SKIP and counts for nothing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 g++ git meson ninja-build pkg-config doctest-dev \
    nlohmann-json3-dev libcli11-dev bubblewrap
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup.sh: the CUDA toolkit (nvcc) is not in this image: build the autograder on a base image" \
         "that has it (12.4 or newer)" >&2
    exit 1
fi
