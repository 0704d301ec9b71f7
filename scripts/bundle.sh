#!/usr/bin/env bash
# A relocatable folder that runs tessera on a machine without its libraries (a bare GPU
# node: a GPU driver, a C library, nothing else): tessera, the Open MPI runtime with its
# launcher and plugins, PMIx, the OpenCL ICD loader, PoCL (the CPU OpenCL device, for the
# tests) with the linker it calls, Jansson, libpng, libgomp, and the scripts to run them.
#
# Usage: scripts/bundle.sh [--build DIR] [--out DIR] [--no-pocl]
#   --build DIR  the Release build to take tessera from (default build-bundle/, built
#                here with the CPU kernels for every x86-64 level: TESSERA_NATIVE off)
#   --out DIR    the folder to make (default tessera-bundle/; replaced)
#   --no-pocl    leave PoCL out (51 MB instead of about 400: PoCL needs LLVM; the node's
#                GPU driver is the device)
#
# In the folder (move it anywhere, as a whole):
#   bin/tessera   tessera with the bundle's libraries
#   bin/mpirun    the bundle's Open MPI launcher; the processes it starts get the same
#                 environment as the shell (the OpenCL vendors folder included), so they
#                 see the same OpenCL platforms
#   bin/gpu-check scripts/gpu-check.sh with the bundle's tessera, mpirun and the build's
#                 gpu test programs (tests/)
#   env.sh        the environment, for a shell: `. tessera-bundle/env.sh`
#   configs/      the example configurations (gpu-check runs two of them)
# The machine must have glibc 2.36 or newer (Debian 12's; the one library not bundled)
# and, for a GPU, its vendor's OpenCL driver: env.sh puts every driver it finds (an .icd
# file in /etc/OpenCL/vendors, or NVIDIA's, AMD's or Intel's library where the driver
# installs it) beside the bundled PoCL into the vendors folder of the ICD loader.
# Multi-node runs are not covered: start one bundle per node with your scheduler's
# launcher, or keep this folder on a path every node sees.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-bundle
out=tessera-bundle
pocl=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-pocl) pocl=0; shift ;;
    *) echo "bundle.sh: unknown argument $1 (see the head of this script)" >&2; exit 2 ;;
  esac
done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

# what tessera needs at run time, and the linker PoCL calls for each kernel
packages=(libopenmpi3 openmpi-bin openmpi-common libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
          libhwloc15 ocl-icd-libopencl1 libjansson4 libpng16-16 zlib1g libgomp1)
[ "$pocl" -eq 0 ] || packages+=(pocl-opencl-icd libpocl2 libpocl2-common binutils
                                binutils-common "binutils-${arch//_/-}" libbinutils
                                libctf0 libctf-nobfd0 libgprofng0)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "bundle.sh: install ${missing[*]} (as root)" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x "$build/apps/tessera" ]; then
  scripts/build.sh "$build" -DTESSERA_NATIVE=OFF
elif grep -q "TESSERA_NATIVE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  echo "bundle.sh: $build was built with TESSERA_NATIVE=ON (for its host alone); give" \
       "another --build" >&2
  exit 1
else
  cmake --build "$build" -j "$(nproc)" > /dev/null
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/libexec" "$out/lib"
root="$out/root" # the packages' files under their Debian paths (Open MPI, PMIx and PoCL
                 # find their plugins and data relative to these)
mkdir -p "$root"

# the files of the packages (no documentation, manuals or headers), at their paths
for p in "${packages[@]}"; do
  dpkg -L "$p" | while read -r f; do
    case "$f" in
      /usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*|/usr/include/*|*.a) continue ;;
    esac
    if [ -f "$f" ] || [ -L "$f" ]; then
      mkdir -p "$root$(dirname "$f")"
      cp -a "$f" "$root$f"
    fi
  done
done

# what PoCL's linker links every kernel with: -lgcc_s (libgcc's linker script and
# archive, from the compiler the build used), -lm and -lc (the machine's own, which the
# linker finds in its default folders)
if [ "$pocl" -eq 1 ]; then
  gccdir=$(dirname "$(gcc -print-file-name=libgcc_s.so)")
  mkdir -p "$root/usr/lib/tessera-link"
  cp "$gccdir/libgcc_s.so" "$gccdir/libgcc.a" "$root/usr/lib/tessera-link/"
  echo "INPUT ( AS_NEEDED ( libm.so.6 ) )" > "$root/usr/lib/tessera-link/libm.so"
  echo "INPUT ( AS_NEEDED ( libc.so.6 ) )" > "$root/usr/lib/tessera-link/libc.so"
fi

# tessera and the libraries it, the launcher, the plugins and PoCL load (those of other
# packages than the ones above, e.g. LLVM for PoCL), glibc's own left to the machine
cp "$build/apps/tessera" "$out/libexec/tessera"
# the build's gpu tests that are programs (the others need CMake) with the list that
# bin/gpu-check runs: "name ranks program arguments" (ranks 0: without mpirun)
mkdir -p "$out/tests"
ctest --test-dir "$build" -L gpu --show-only=json-v1 | python3 -c '
import json, os, shutil, sys
out = sys.argv[1]
for t in json.load(sys.stdin)["tests"]:
    c = t.get("command") or []
    ranks = 0
    if c and os.path.basename(c[0]) in ("mpiexec", "mpirun"):
        ranks, c = int(c[c.index("-n") + 1]), [a for a in c[c.index("-n") + 2:] if a != "--oversubscribe"]
    if not c or not os.path.basename(c[0]).startswith("test_"):
        continue
    name = os.path.basename(c[0])
    if not os.path.exists(os.path.join(out, name)):
        shutil.copy2(c[0], os.path.join(out, name))
    print(t["name"], ranks, name, *c[1:])
' "$out/tests" > "$out/tests/gpu-tests.txt"
glibc='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|ld-linux-x86-64|libnss_.*)\.so'
elves=("$out/libexec/tessera" "$out"/tests/test_*)
while IFS= read -r -d '' f; do
  [ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" = 7f454c46 ] && elves+=("$f")
done < <(find "$root" -type f \( -name "*.so*" -o -path "*/bin/*" \) -print0)
ldd "${elves[@]}" 2>/dev/null | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  base=$(basename "$lib")
  [[ "$base" =~ $glibc ]] && continue
  [ -e "$root$lib" ] || [ -e "$root/usr$lib" ] || cp -L "$lib" "$out/lib/$base"
done

# the environment: every path from the folder's own place
cat > "$out/env.sh" <<'ENV'
# tessera bundle: source this (bash) to run the bundle's tessera and mpirun
TESSERA_BUNDLE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TESSERA_BUNDLE
__arch=@ARCH@
__root=$TESSERA_BUNDLE/root
export PATH="$TESSERA_BUNDLE/bin:$__root/usr/bin:$PATH"
export LD_LIBRARY_PATH="$TESSERA_BUNDLE/lib:$__root/usr/lib/$__arch:$__root/usr/lib/$__arch/openmpi/lib:$__root/usr/lib/$__arch/pmix2/lib:$__root/lib/$__arch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Open MPI and PMIx from the bundle, wherever it lies
export OPAL_PREFIX="$__root/usr" OPAL_EXEC_PREFIX="$__root/usr" OPAL_BINDIR="$__root/usr/bin"
export OPAL_LIBDIR="$__root/usr/lib/$__arch" OPAL_PKGLIBDIR="$__root/usr/lib/$__arch/openmpi/lib/openmpi3"
export OPAL_DATAROOTDIR="$__root/usr/share" OPAL_DATADIR="$__root/usr/share" OPAL_PKGDATADIR="$__root/usr/share/openmpi"
export OPAL_SYSCONFDIR="$__root/etc/openmpi"
# one node, no ssh: the processes (and a singleton's daemon) start without a remote agent
export OMPI_MCA_plm=${OMPI_MCA_plm:-isolated}
export PMIX_PREFIX="$__root/usr/lib/$__arch/pmix2" PMIX_LIBDIR="$__root/usr/lib/$__arch/pmix2/lib"
export PMIX_PKGLIBDIR="$__root/usr/lib/$__arch/pmix2/lib/pmix" PMIX_PKGDATADIR="$__root/usr/lib/$__arch/pmix2/share/pmix"
# the OpenCL platforms: the bundled PoCL and every driver of the machine, in one vendors
# folder that the ICD loader of every process reads (the shell's and mpirun's children)
__vendors=$TESSERA_BUNDLE/vendors
if ! mkdir -p "$__vendors" 2>/dev/null || ! [ -w "$__vendors" ]; then
  __vendors=${TMPDIR:-/tmp}/tessera-vendors-$(id -u)
  mkdir -p "$__vendors"
fi
rm -f "$__vendors"/*.icd
[ -e "$__root/usr/lib/$__arch/libpocl.so.2" ] && echo "$__root/usr/lib/$__arch/libpocl.so.2" > "$__vendors/pocl.icd"
for __f in /etc/OpenCL/vendors/*.icd; do
  [ -e "$__f" ] && [ "$(basename "$__f")" != pocl.icd ] && cp "$__f" "$__vendors/"
done
for __lib in libnvidia-opencl.so.1 libamdocl64.so libigdrcl.so; do
  grep -qs "$__lib" "$__vendors"/*.icd && continue # (none there: grep fails too)
  for __dir in /usr/lib/$__arch /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib /opt/rocm/lib /opt/amdgpu/lib64; do
    if [ -e "$__dir/$__lib" ]; then echo "$__dir/$__lib" > "$__vendors/${__lib%%.so*}.icd"; break; fi
  done
done
export OCL_ICD_VENDORS=$__vendors
# PoCL links each kernel it builds: the linker (ld) comes from PATH, libgcc from here
export LIBRARY_PATH="$__root/usr/lib/tessera-link:$TESSERA_BUNDLE/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
unset __arch __root __vendors __f __lib __dir
ENV
sed -i "s|@ARCH@|$arch|" "$out/env.sh"

cat > "$out/bin/tessera" <<'SH'
#!/usr/bin/env bash
. "$(dirname "$(readlink -f "$0")")/../env.sh"
exec "$TESSERA_BUNDLE/libexec/tessera" "$@"
SH
# mpirun forwards the environment to the processes it starts on this node; their
# program, found on PATH, is bin/tessera, which sets it once more
cat > "$out/bin/mpirun" <<'SH'
#!/usr/bin/env bash
. "$(dirname "$(readlink -f "$0")")/../env.sh"
exec "$TESSERA_BUNDLE/root/usr/bin/orterun" -x PATH -x LD_LIBRARY_PATH -x OCL_ICD_VENDORS \
  -x LIBRARY_PATH "$@"
SH
cp scripts/gpu-check.sh "$out/libexec/gpu-check.sh"
cp -r configs "$out/configs" # the cases gpu-check runs, and examples
mkdir -p "$out/scripts"
cp -r scripts/peer-bench "$out/scripts/peer-bench" # gpu-check's fluidx3d section
cat > "$out/bin/gpu-check" <<'SH'
#!/usr/bin/env bash
# scripts/gpu-check.sh with the bundle's tessera, mpirun and gpu test programs
. "$(dirname "$(readlink -f "$0")")/../env.sh"
exec "$TESSERA_BUNDLE/libexec/gpu-check.sh" --tessera "$TESSERA_BUNDLE/bin/tessera" \
  --tests "$TESSERA_BUNDLE/tests/gpu-tests.txt" "$@"
SH
chmod +x "$out/bin/"*
echo "bundle.sh: $out ($(du -sh "$out" | cut -f1)): bin/tessera, bin/mpirun, bin/gpu-check, env.sh"
