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
#   scripts/cluster.sh check TESSERA    up 4 (nodes 1-2 run a GPU process each, PoCL where
#                                       no GPU exists; nodes 3-4 a CPU process each, by
#                                       tests/cli/cluster_cavity.json's node
#                                       configurations): tessera info names the nodes; the
#                                       run gives every node blocks, predicts the
#                                       between-node communication the plan for these node
#                                       names predicts, and writes what one process on this
#                                       host writes, bit for bit, as does a restart in one
#                                       process from its checkpoint; killing node 3's
#                                       process ends every rank; down. Exit status 77 where
#                                       namespaces cannot be made here (a CTest skip)
#
# mpirun binds no process to a core (--bind-to none): each node's daemon would otherwise
# bind its first process to core 0 of the one machine they all share, and processes of
# different nodes polling for messages on one core wait for the scheduler's tick (4 ms
# per message measured over two nodes, 17 us unbound). And a waiting process yields its
# core (mpi_yield_when_idle): each daemon sees one process on a whole machine and would let
# it spin, while the nodes' processes outnumber the cores (4 nodes on 2 cores: 26.7 ms per
# step spinning, 1.8 ms yielding, tests/cli/cluster_cavity.json).
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
    # whatever still runs on the node (a run's daemons and processes) ends with it
    ip netns pids "$(node_ns "$n")" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip link del "tsrc-v$n" 2>/dev/null || true # at once: a namespace goes asynchronously
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
    mpirun --hostfile "$state/hosts" --mca plm_rsh_agent "$state/agent" --bind-to none \
      --mca mpi_yield_when_idle 1 \
      --mca btl tcp,vader,self --mca btl_tcp_if_include "$net.0/24" \
      --mca oob_tcp_if_include "$net.0/24" "$@"
}

# the files two runs wrote that must agree bit for bit: the probe and the VTK files of the
# last step
same_fields() {
  local a=$1 b=$2 f n=0
  for f in "$a"/probe_column_000400.csv "$a"/fields_000400.vti; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$b/${f#"$a"/}" || { echo "cluster.sh: $f differs from $b/${f#"$a"/}" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -gt 1 ] || { echo "cluster.sh: $a holds no probe and VTK files to compare" >&2; return 1; }
  echo "$n files bitwise equal: $a and $b"
}

# the processes of program $2 in node $1's namespace (none: no output, status 0)
node_tessera() {
  local p exe
  exe=$(readlink -f "$2")
  for p in $(ip netns pids "$(node_ns "$1")" 2>/dev/null || true); do
    if [ "$(readlink /proc/"$p"/exe 2>/dev/null || true)" = "$exe" ]; then echo "$p"; fi
  done
}

# The run of CONFIG on 4 nodes, killed on node 3 once it runs: every rank must end
kill_one_node() {
  local tessera=$1 config=$2 pid victim="" t n
  cluster_mpirun -np 4 "${env[@]}" "$tessera" run "$config" --steps 1000000000 \
    --set output.progress_every=10 --output "$out/killed" >"$out/killed.log" 2>&1 &
  pid=$!
  for t in $(seq 1 300); do
    victim=$(node_tessera 3 "$tessera" | head -1)
    [ -n "$victim" ] && grep -q "^step " "$out/killed.log" && break
    sleep 0.1
  done
  if [ -z "$victim" ] || ! grep -q "^step " "$out/killed.log"; then
    echo "cluster.sh: the run on four nodes did not start stepping in 30 s" >&2
    cat "$out/killed.log"; kill -KILL "$pid"; return 1
  fi
  kill -KILL "$victim"
  for t in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "cluster.sh: 30 s after node 3's process was killed, the run still lives" >&2
    kill -KILL "$pid"; return 1
  fi
  if wait "$pid"; then echo "cluster.sh: the run whose node 3 was killed exited 0" >&2; return 1; fi
  for n in 1 2 3 4; do
    if [ -n "$(node_tessera "$n" "$tessera")" ]; then
      echo "cluster.sh: a tessera process outlived the run on node $n" >&2; return 1
    fi
  done
  echo "node 3's process killed: every rank ended, mpirun exited non-zero in $((t / 10)).$((t % 10)) s"
}

cluster_check() {
  local tessera=$1 here config v n
  here=$(cd "$(dirname "$0")/.." && pwd)
  config=$here/tests/cli/cluster_cavity.json
  if ! ip netns add tsrc-probe 2>/dev/null; then
    echo "cluster.sh: cannot make a network namespace here (not root, or no namespaces): skipped"
    exit 77
  fi
  ip netns del tsrc-probe
  out=$(mktemp -d) # global: the trap removes it
  trap 'cluster_down; rm -rf "$out"' EXIT
  # what the ranks on the nodes get of this environment (mpirun forwards only -x)
  env=(-x OMP_NUM_THREADS=1)
  for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS POCL_CACHE_DIR; do
    [ -n "${!v:-}" ] && env+=(-x "$v")
  done
  cluster_down
  cluster_up 4 1
  cluster_mpirun -np 4 "${env[@]}" "$tessera" info >"$out/info.log" 2>&1 ||
    { cat "$out/info.log"; return 1; }
  for n in 1 2 3 4; do
    grep -q "tessera-node$n" "$out/info.log" ||
      { cat "$out/info.log"; echo "cluster.sh: tessera info does not name tessera-node$n" >&2; return 1; }
  done
  echo "tessera info names the four nodes"
  cluster_mpirun -np 4 "${env[@]}" "$tessera" run "$config" --output "$out/nodes" \
    >"$out/nodes.log" 2>&1 || { cat "$out/nodes.log"; return 1; }
  cat "$out/nodes.log"
  for n in 1 2 3 4; do
    local hs=gpu; [ "$n" -gt 2 ] && hs=cpu
    grep -Eq "rank $((n - 1)) tessera-node$n $hs: [1-9][0-9]* blocks" "$out/nodes.log" || {
      echo "cluster.sh: rank $((n - 1)) did not run blocks on $hs as tessera-node$n" >&2; return 1; }
  done
  # the between-node term of the plan: a plan for these four node names predicts the
  # communication the run predicted (the same per-process line)
  "$tessera" plan "$config" --nodes "tessera-node[1-4]" >"$out/plan.log" 2>&1 ||
    { cat "$out/plan.log"; return 1; }
  local run_comm plan_comm
  run_comm=$(sed -n 's/^  rank 0 tessera-node1 gpu: .*| [0-9.]* + [0-9.]* + \([0-9.]*\) |.*/\1/p' "$out/nodes.log")
  plan_comm=$(awk '$1 == "0" && $2 == "tessera-node1" {
    for (i = 1; i <= NF; i++) if ($i ~ /ms$/ && ++k == 3) { sub("ms", "", $i); print $i } }' "$out/plan.log")
  echo "rank 0's predicted communication: run $run_comm ms, plan $plan_comm ms per step"
  [ -n "$run_comm" ] && [ "$run_comm" = "$plan_comm" ] && awk -v c="$run_comm" 'BEGIN { exit !(c > 0) }' || {
    cat "$out/plan.log"; echo "cluster.sh: no between-node communication predicted, or plan and run differ" >&2
    return 1; }
  # the same run in one process on this host, and the second half again in one process
  # from the checkpoint the four nodes wrote at step 200
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TESSERA_NODE_NAME=tessera-node3 \
    mpirun --oversubscribe -np 1 "${env[@]}" "$tessera" run "$config" --output "$out/host" \
    >"$out/host.log" 2>&1 || { cat "$out/host.log"; return 1; }
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TESSERA_NODE_NAME=tessera-node3 \
    mpirun --oversubscribe -np 1 "${env[@]}" "$tessera" run "$config" --output "$out/restart" \
    --restart "$out/nodes/checkpoint_000200.tsrc" >"$out/restart.log" 2>&1 ||
    { cat "$out/restart.log"; return 1; }
  same_fields "$out/nodes" "$out/host" && same_fields "$out/nodes" "$out/restart" || return 1
  kill_one_node "$tessera" "$config"
}

case ${1:-} in
  up) shift; cluster_up "$@" ;;
  mpirun) shift; cluster_mpirun "$@" ;;
  down) cluster_down ;;
  check) shift; cluster_check "$@" ;;
  *) sed -n '2,35p' "$0" >&2; exit 2 ;;
esac
