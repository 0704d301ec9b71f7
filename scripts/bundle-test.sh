#!/usr/bin/env bash
# The bundle (scripts/bundle.sh) on a machine without tessera's libraries: a minimal
# Debian 12 root made from Debian's packages (mmdebstrap --variant=minbase: no Open MPI,
# OpenCL loader, PoCL, Jansson, libpng or libgomp; checked), the bundle copied into it,
# then inside it (chroot, its own /proc, /sys and /dev):
#   1. `tessera info` sees the bundled PoCL as an OpenCL platform;
#   2. `mpirun -n 2 tessera run` of a lid-driven cavity on hs gpu (the bundled PoCL
#      builds and links its kernels there) ends well, and its VTK files and probes equal
#      byte for byte those of the same run of the build the bundle was made from, here;
#   3. one of the bundle's gpu test programs (the ghost exchange of GPU blocks on 2
#      ranks, bin/gpu-check runs them all) passes.
# Needs root (chroot, mounts) and a Debian mirror (mmdebstrap downloads the root).
# Usage: scripts/bundle-test.sh [--build DIR] [--mirror URL] [--keep]
#   --build DIR   the Release build to bundle (default build)
#   --mirror URL  Debian mirror for the root (default: the one this machine's apt uses,
#                 the first URI of its bookworm sources)
#   --keep        keep the work folder (printed) instead of removing it
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
mirror=
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "bundle-test.sh: unknown argument $1 (see the head of this script)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bundle-test.sh: needs root (chroot and mounts)" >&2; exit 1; }
if [ -z "$mirror" ]; then # the machine's own: deb822 sources first, then sources.list
  mirror=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ && u { print u; exit }' \
             /etc/apt/sources.list.d/*.sources 2> /dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
                                 /etc/apt/sources.list 2> /dev/null || true)
  [ -n "$mirror" ] || { echo "bundle-test.sh: no bookworm source in /etc/apt; give --mirror URL" >&2
                        exit 1; }
fi
start=$(date +%s)
if ! command -v mmdebstrap > /dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap > /dev/null
fi
work=$(mktemp -d /tmp/tessera-bundle-test.XXXXXX)
cleanup() { if [ "$keep" -eq 1 ]; then echo "bundle-test.sh: kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

echo "== the bundle"
scripts/bundle.sh --build "$build" --out "$work/bundle" | tail -1

echo "== a minimal Debian 12 root (mmdebstrap --variant=minbase)"
mmdebstrap --quiet --variant=minbase --mode=root bookworm "$work/root" "$mirror"
for lib in libmpi.so libOpenCL.so libpocl.so libjansson.so libpng16.so libgomp.so; do
  if find "$work/root/usr/lib" "$work/root/lib" -name "$lib*" 2> /dev/null | grep -q .; then
    echo "bundle-test.sh: the minimal root has $lib already" >&2
    exit 1
  fi
done
cp -a "$work/bundle" "$work/root/opt/tessera-bundle"
mkdir -p "$work/root/root/case"
cp tests/configs/run_small_cavity_gpu.json "$work/root/root/case/cavity.json"

inside() { # a command in the root: its own mount namespace, proc, sys and dev
  unshare -m bash -c 'r=$1; shift
    mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" && mount --rbind /dev "$r/dev"
    exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 bash -c "$1"' \
    inside "$work/root" "$1"
}

echo "== tessera info in the root"
inside "/opt/tessera-bundle/bin/tessera info" | tee "$work/info.txt"
grep -q 'platform 0 "Portable Computing Language"' "$work/info.txt" ||
  { echo "bundle-test.sh: tessera info in the root sees no PoCL platform" >&2; exit 1; }

echo "== a 2-rank run on the bundled PoCL in the root"
inside "cd /root/case && /opt/tessera-bundle/bin/mpirun --oversubscribe -n 2 tessera run \
  cavity.json --output out --overwrite" | tee "$work/run.txt"
grep -q "hs gpu" "$work/run.txt" && grep -q "^summary:" "$work/run.txt" ||
  { echo "bundle-test.sh: the run in the root did not end with its summary" >&2; exit 1; }

echo "== a gpu test program of the bundle in the root"
inside "cd /root && /opt/tessera-bundle/bin/mpirun --oversubscribe -n 2 \
  /opt/tessera-bundle/tests/test_ghost_exchange --hs gpu" > "$work/test.txt" 2>&1 ||
  { cat "$work/test.txt"; echo "bundle-test.sh: test_ghost_exchange failed in the root" >&2; exit 1; }
grep -E "PASSED|FAILED" "$work/test.txt" | head -2

echo "== the same run of $build here, compared"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -n 2 \
  "$build/apps/tessera" run tests/configs/run_small_cavity_gpu.json --output "$work/here" \
  --overwrite > "$work/here.txt"
n=0
while IFS= read -r -d '' f; do
  rel=${f#"$work/here/"}
  cmp -s "$f" "$work/root/root/case/out/$rel" ||
    { echo "bundle-test.sh: $rel differs between the bundle's run and $build's" >&2; exit 1; }
  n=$((n + 1))
done < <(find "$work/here" \( -name "*.vti" -o -name "*.pvti" -o -name "probe_*.csv" \) -print0)
[ "$n" -gt 0 ] || { echo "bundle-test.sh: no output files to compare" >&2; exit 1; }
echo "bundle-test.sh: passed ($n files equal, $(du -sh "$work/bundle" | cut -f1) bundle," \
     "$(( $(date +%s) - start )) s)"
