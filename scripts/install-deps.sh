#!/usr/bin/env bash
# Installs the Debian packages tessera needs to build and test, only those missing.
# Usage: scripts/install-deps.sh [--fuzz]   (--fuzz adds clang and its libFuzzer runtime)
set -euo pipefail

packages=(build-essential cmake pkg-config
          libopenmpi-dev openmpi-bin
          ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
          libjansson-dev libpng-dev libcmocka-dev python3 python3-vtk9)
if [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} Debian packages are installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo=(sudo); else
    echo "install-deps: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
