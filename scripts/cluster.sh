#!/usr/bin/env bash
# Emulated nodes on one machine: each "node" a Linux network namespace with a host name of
# its own (a UTS namespace), all joined by veth links to one bridge; Open MPI starts its
# daemons on them through an agent that enters a node's namespaces (instead of ssh), and
# the ranks talk over TCP between nodes, shared memory within one. Needs root (or
# CAP_SYS_ADMIN and CAP_NET_ADMIN) and a kernel with network namespaces, veth and bridges.
# The file system is shared: every node sees the same files (the output folder, the build).
#
#   scripts/cluster.sh up N [SLOTS]     N nodes (names tessera-node1 ..., addresses
#                                       10.77.0.1 ...), SLOTS processes each (default 1)
#   scripts/cluster.sh mpirun ARGS...   mpirun on the nodes that are up (from node 1), the
#                                       agent, hostfile and TCP interfaces set; ARGS as
#                                       mpirun's (-np, -x, the program and its arguments)
#   scripts/cluster.sh down             removes every node, link and the bridge
#   scripts/cluster.sh check TESSERA    up 2, the passive scalar's cavity on 2 ranks, one per
#                                       node, against the same run on this host: the node
#                                       names in the run's report and its probe bitwise the
#                                       same; down. Exit status 77 where namespaces cannot
#                                       be made here (a CTest skip)
#
# Link delay and rate (`tc qdisc ... netem`) need the kernel's sch_netem; where the kernel
# lacks it (`tc` says "Specified qdisc kind is unknown"), the links are plain veth.
set -euo pipefail
state=/run/tessera-cluster
bridge=tsrc-br
net=10.77.0

node_ns() { echo "tsrc-n$1"; }

cluster_down() {
  local n
  for n in $(cat "$state/nodes" 2>/dev/null || true); do
    ip netns del "$(node_ns "$n")" 2>/dev/null || true
    umount "$state/uts-$n" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
  [ -d "$state" ] && rm -f "$state"/uts-* "$state/nodes" "$state/hosts" "$state/agent" &&
    rmdir "$state" 2>/dev/null || true
}

cluster_up() {
  local count=$1 slots=${2:-1} n
  [ -e "$state/nodes" ] && { echo "cluster.sh: nodes are up already; run down first" >&2; return 1; }
  mkdir -p "$state"
  : >"$state/nodes"
  : >"$state/hosts"
  ip link add "$bridge" type bridge
  ip link set "$bridge" up
  for n in $(seq 1 "$count"); do
    echo "$n" >>"$state/nodes"
    ip netns add "$(node_ns "$n")"
    ip link add "tsrc-v$n" type veth peer name eth0 netns "$(node_ns "$n")"
    ip link set "tsrc-v$n" master "$bridge" up
    ip netns exec "$(node_ns "$n")" ip addr add "$net.$n/24" dev eth0
    ip netns exec "$(node_ns "$n")" ip link set eth0 up
    ip netns exec "$(node_ns "$n")" ip link set lo up
    touch "$state/uts-$n"
    unshare --uts="$state/uts-$n" hostname "tessera-node$n"
    echo "$net.$n slots=$slots" >>"$state/hosts"
  done
  # Open MPI's rsh agent: the command in the namespaces of the node at address $1
  cat >"$state/agent" <<EOF
#!/bin/sh
host=\$1; shift
n=\${host##*.}
exec nsenter --net=/run/netns/tsrc-n\$n --uts=$state/uts-\$n -- sh -c "\$*"
EOF
  chmod +x "$state/agent"
}

cluster_mpirun() {
  [ -e "$state/nodes" ] || { echo "cluster.sh: no nodes are up" >&2; return 1; }
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    nsenter --net=/run/netns/"$(node_ns 1)" --uts="$state/uts-1" -- \
    mpirun --hostfile "$state/hosts" --mca plm_rsh_agent "$state/agent" \
      --mca btl tcp,vader,self --mca btl_tcp_if_include "$net.0/24" \
      --mca oob_tcp_if_include "$net.0/24" "$@"
}

cluster_check() {
  local tessera=$1 here v
  here=$(cd "$(dirname "$0")/.." && pwd)
  if ! ip netns add tsrc-probe 2>/dev/null; then
    echo "cluster.sh: cannot make a network namespace here (not root, or no namespaces): skipped"
    exit 77
  fi
  ip netns del tsrc-probe
  out=$(mktemp -d) # global: the trap removes it
  trap 'cluster_down; rm -rf "$out"' EXIT
  # what the ranks on the nodes get of this environment (mpirun forwards only -x)
  local env=(-x OMP_NUM_THREADS=1)
  for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do [ -n "${!v:-}" ] && env+=(-x "$v"); done
  cluster_down
  cluster_up 2 1
  local args=(run "$here/tests/scalar/cavity.json" --set "domain.blocks=[2,2,1]"
              --set 'hardware.balance={"latency_us":0,"network_gbs":1000}' --overwrite)
  cluster_mpirun -np 2 "${env[@]}" "$tessera" "${args[@]}" --output "$out/nodes" \
    >"$out/nodes.log" 2>&1 || { cat "$out/nodes.log"; return 1; }
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe \
    -np 2 "${env[@]}" "$tessera" "${args[@]}" --output "$out/host" >"$out/host.log" 2>&1 ||
    { cat "$out/host.log"; return 1; }
  cat "$out/nodes.log"
  grep -q "rank 0 tessera-node1 " "$out/nodes.log" && grep -q "rank 1 tessera-node2 " "$out/nodes.log" ||
    { echo "cluster.sh: the run does not name the nodes tessera-node1 and tessera-node2" >&2; return 1; }
  grep -Eq "rank 1 tessera-node2 cpu: [1-9][0-9]* blocks" "$out/nodes.log" ||
    { echo "cluster.sh: node 2 got no block: the run did not cross the nodes" >&2; return 1; }
  cmp "$out/nodes/probe_column_000400.csv" "$out/host/probe_column_000400.csv" ||
    { echo "cluster.sh: the run over two nodes differs from the run on one host" >&2; return 1; }
  echo "two nodes: the same probe, bit for bit, as on one host"
}

case ${1:-} in
  up) shift; cluster_up "$@" ;;
  mpirun) shift; cluster_mpirun "$@" ;;
  down) cluster_down ;;
  check) shift; cluster_check "$@" ;;
  *) sed -n '2,25p' "$0" >&2; exit 2 ;;
esac
