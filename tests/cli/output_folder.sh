#!/usr/bin/env bash
# The output folder a run owns (framework/output.h), as a user meets it, on 2 ranks:
#   unwritable  a folder that exists and cannot be written: one error, before step 0
#   concurrent  a second run into the folder of a live run: refused (even with
#               --overwrite), the first run goes on unharmed
#   rerun       a run killed halfway, then a new run: refused without --overwrite and
#               nothing removed; with it, the folder holds exactly the files the new run's
#               manifest lists, and the user's own file
#   foreign     files that match tessera's names but that no manifest lists (a user's
#               probe_*.csv, series_*.csv, summary.json): refused, with --overwrite too,
#               naming them and leaving them as they were; beside an earlier run's
#               output, --overwrite still refuses and removes nothing
#   full_disk   a file system that fills up (a small tmpfs): one error, and no 0-byte,
#               partial or temporary file left; a checkpoint that does not fit is not
#               in the manifest
#   restart_elsewhere
#               a restart into another folder: its fields.pvd lists only the steps
#               whose files are in that folder
#   restart_latest
#               --restart latest and --restart FOLDER take the checkpoint of the highest
#               step (step 1000 after 990: by number, not by name), and the result is the
#               same as from that file; a folder without checkpoints: one error
#   non_utf8    a configuration whose path is not UTF-8: the run completes and its
#               summary names the path with the byte escaped
#   signal      SIGTERM, then SIGINT, to mpirun (which forwards them to the ranks) during
#               a run: every rank ends after the same step, summary.json and the manifest
#               say "interrupted" and name the signal, the folder holds what the manifest
#               lists; with checkpoints on (SIGTERM), the stopping step's checkpoint is
#               written, named in summary.json, and a restart goes on from it
#   shell       a job script's shell killed by SIGTERM while it waits: tessera started
#               from it without a launcher stops as at SIGTERM (it watches its parent);
#               mpirun started with exec (docs/configuration.md, job scripts) gets the
#               signal itself and passes it on
# Usage: output_folder.sh CASE TESSERA WORKDIR, from the source tree. Exit 77: skipped
# (a tmpfs cannot be mounted here).
set -euo pipefail
what=$1 tessera=$2 work=$3
mpi=(mpirun -np 2 --oversubscribe)
export OMP_NUM_THREADS=1
long_config=tests/configs/output/long_cavity.json   # 10^6 steps: stopped by the test
short_config=tests/configs/output/short_cavity.json # 20 steps: VTK, probe, slice
mounted=""
long=""
cleanup() {
  if [[ -n $long ]]; then kill -TERM "$long" 2>/dev/null || true; wait "$long" 2>/dev/null || true; fi
  if [[ -n $mounted ]]; then umount "$mounted"; fi
}
trap cleanup EXIT
if mountpoint -q "$work/fs" 2>/dev/null; then umount "$work/fs"; fi
rm -rf "$work"
mkdir -p "$work"

fail() { echo "FAIL ($what): $*" >&2; exit 1; }
# run LOG ARGS...: tessera run ARGS, stdout and stderr to LOG.out and LOG.err, status in $rc
run() {
  local log=$1
  shift
  set +e
  "${mpi[@]}" "$tessera" run "$@" >"$log.out" 2>"$log.err"
  rc=$?
  set -e
}
# failed LOG TEXT: the run failed with exactly one error line, and that line has TEXT
failed() {
  [[ $rc -ne 0 ]] || fail "the run succeeded: $(cat "$1.out")"
  local n
  n=$(grep -c "tessera: error: " "$1.err" || true)
  [[ $n -eq 1 ]] || fail "expected one error line, got $n: $(cat "$1.err")"
  grep -qF -- "$2" "$1.err" || fail "the error lacks '$2': $(cat "$1.err")"
}
wait_for() { # FILE: appears within 60 s, while the long run lives
  for ((i = 0; i < 600; ++i)); do
    [[ -e $1 ]] && return 0
    kill -0 "$long" 2>/dev/null || fail "the long run ended: $(cat "$work/long.err")"
    sleep 0.1
  done
  fail "$1 did not appear within 60 s"
}
start_long() { # FOLDER [ARGS]: the long run, in the background
  "${mpi[@]}" "$tessera" run "$long_config" --output "$@" >"$work/long.out" 2>"$work/long.err" &
  long=$!
}
stop_long() {
  kill -TERM "$long"
  wait "$long" 2>/dev/null || true
  long=""
}
mount_tmpfs() { # OPTIONS: a tmpfs at $work/fs, or skip
  mkdir -p "$work/fs"
  if [[ $(id -u) -ne 0 ]] || ! mount -t tmpfs -o "$1" tessera-test "$work/fs" 2>/dev/null; then
    echo "skipped: cannot mount a tmpfs here"
    exit 77
  fi
  mounted=$work/fs
}
# the folder holds exactly the files its manifest lists, the manifest, the lock and
# the extra files named; the manifest's status is STATUS
check_manifest() { # STATUS FOLDER EXTRA...
  python3 - "$@" <<'EOF'
import json, os, sys
status, folder, extra = sys.argv[1], sys.argv[2], set(sys.argv[3:])
m = json.load(open(os.path.join(folder, "manifest.json")))
have = {os.path.relpath(os.path.join(r, f), folder) for r, _, fs in os.walk(folder) for f in fs}
want = set(m["files"]) | {"manifest.json", ".tessera.lock"} | extra
if have != want:
    sys.exit("not in the manifest: %s; in the manifest but missing: %s"
             % (sorted(have - want), sorted(want - have)))
if m["status"] != status:
    sys.exit("manifest status " + m["status"])
EOF
}

case $what in
unwritable)
  dir=$work/fs
  if [[ $(id -u) -eq 0 ]]; then
    mount_tmpfs ro,size=64k # root writes anywhere a permission bit forbids
  else
    mkdir -p "$dir"
    chmod 555 "$dir"
  fi
  run "$work/ro" "$short_config" --output "$dir"
  failed "$work/ro" "cannot write in the output folder '$dir'"
  if grep -q "^tessera run\|^step " "$work/ro.out"; then fail "the run started: $(cat "$work/ro.out")"; fi
  ;;
concurrent)
  dir=$work/shared
  start_long "$dir"
  wait_for "$dir/manifest.json"
  run "$work/second" "$short_config" --output "$dir" --overwrite
  failed "$work/second" "the output folder '$dir' is in use by another tessera run (process"
  kill -0 "$long" 2>/dev/null || fail "the first run ended: $(cat "$work/long.err")"
  grep -q '"status": "running"' "$dir/manifest.json" || fail "the first run's manifest was touched"
  ;;
rerun)
  dir=$work/again
  mkdir -p "$dir"
  echo "notes of the user" >"$dir/notes.txt"
  start_long "$dir"
  wait_for "$dir/fields_000040.vti"
  stop_long
  run "$work/refused" "$short_config" --output "$dir"
  failed "$work/refused" "holds the output of an earlier run"
  [[ -e $dir/fields_000040.vti ]] || fail "a refused run removed files"
  run "$work/new" "$short_config" --output "$dir" --overwrite
  [[ $rc -eq 0 ]] || fail "the new run failed: $(cat "$work/new.err")"
  check_manifest completed "$dir" notes.txt || fail "the folder mixes runs"
  grep -q "notes of the user" "$dir/notes.txt" || fail "the user's file was changed"
  grep -q '"steps": 20' "$dir/summary.json" || fail "summary.json is not the new run's"
  ;;
foreign)
  dir=$work/mine
  mkdir -p "$dir"
  for f in probe_vertical_000010.csv series_lift.csv summary.json; do echo "$f of the user" >"$dir/$f"; done
  for flag in "" --overwrite; do
    run "$work/foreign$flag" "$short_config" --output "$dir" $flag
    failed "$work/foreign$flag" "holds 3 file(s) a run would write over that no tessera manifest lists ('probe_vertical_000010.csv', 'series_lift.csv', 'summary.json')"
  done
  for f in probe_vertical_000010.csv series_lift.csv summary.json; do
    grep -qx "$f of the user" "$dir/$f" || fail "$f was changed"
  done
  [[ ! -e $dir/manifest.json ]] || fail "a refused run wrote a manifest"
  # an earlier run's output and one file of the user's that matches a pattern
  dir=$work/mixed
  run "$work/first" "$short_config" --output "$dir"
  [[ $rc -eq 0 ]] || fail "the first run failed: $(cat "$work/first.err")"
  echo "mine" >"$dir/probe_mine_000000.csv"
  before=$(ls -R "$dir")
  run "$work/mixed" "$short_config" --output "$dir" --overwrite
  failed "$work/mixed" "no tessera manifest lists ('probe_mine_000000.csv')"
  [[ $(ls -R "$dir") == "$before" ]] || fail "a refused run changed the folder"
  rm "$dir/probe_mine_000000.csv"
  run "$work/again" "$short_config" --output "$dir" --overwrite
  [[ $rc -eq 0 ]] || fail "--overwrite of a run's own output failed: $(cat "$work/again.err")"
  check_manifest completed "$dir" || fail "the folder mixes runs"
  ;;
full_disk)
  mount_tmpfs size=256k # step 0's VTK fits, step 20's does not
  dir=$work/fs/out
  run "$work/full" "$long_config" --output "$dir" --steps 200
  failed "$work/full" "No space left on device"
  empty=$(find "$dir" -type f -empty)
  [[ -z $empty ]] || fail "0-byte files left: $empty"
  temporaries=$(find "$dir" -name '.*.tmp-*')
  [[ -z $temporaries ]] || fail "temporary files left: $temporaries"
  while IFS= read -r f; do
    [[ $(tail -c 11 "$f") == "</VTKFile>" ]] || fail "$f is not complete"
  done < <(find "$dir" -name '*.vti' -o -name '*.pvti' -o -name '*.pvd')
  # a checkpoint that does not fit: the manifest does not list it
  rm -rf "$dir"
  run "$work/full_ckpt" "$long_config" --output "$dir" --steps 200 --set output.vtk_every=0 \
    --set output.checkpoint_every=10
  failed "$work/full_ckpt" "No space left on device"
  check_manifest failed "$dir" || fail "the manifest after a failed checkpoint"
  ;;
restart_elsewhere)
  run "$work/first" "$short_config" --output "$work/first" --set output.checkpoint_every=10
  [[ $rc -eq 0 ]] || fail "the first run failed: $(cat "$work/first.err")"
  run "$work/second" "$short_config" --output "$work/second" --restart "$work/first/checkpoint_000010.tsrc" --steps 30
  [[ $rc -eq 0 ]] || fail "the restart failed: $(cat "$work/second.err")"
  listed=$(sed -n 's/.*file="\([^"]*\)".*/\1/p' "$work/second/fields.pvd")
  [[ -n $listed ]] || fail "fields.pvd lists nothing: $(cat "$work/second/fields.pvd")"
  for f in $listed; do [[ -e $work/second/$f ]] || fail "fields.pvd lists $f, which is not there"; done
  [[ $listed == *fields_000030.vti* ]] || fail "fields.pvd lacks step 30: $listed"
  ;;
restart_latest)
  dir=$work/latest
  run "$work/first" "$short_config" --output "$dir" --set output.checkpoint_every=10
  [[ $rc -eq 0 ]] || fail "the first run failed: $(cat "$work/first.err")"
  # on in the same folder to a checkpoint of a later step whose name sorts first
  run "$work/on" "$short_config" --output "$dir" --restart "$dir/checkpoint_000010.tsrc" \
    --steps 1000 --set output.checkpoint_every=1000 --set output.vtk_every=0
  [[ $rc -eq 0 ]] || fail "the run to step 1000 failed: $(cat "$work/on.err")"
  [[ -f $dir/checkpoint_000020.tsrc && -f $dir/checkpoint_001000.tsrc ]] ||
    fail "expected checkpoints of steps 20 and 1000: $(ls "$dir")"
  for how in latest "$dir"; do
    rm -rf "$work/from_$$"
    if [[ $how == latest ]]; then
      run "$work/latest_run" "$short_config" --output "$dir" --restart latest --steps 1010
    else
      run "$work/latest_run" "$short_config" --output "$work/from_$$" --restart "$dir" --steps 1010
    fi
    [[ $rc -eq 0 ]] || fail "--restart $how failed: $(cat "$work/latest_run.err")"
    grep -q "restarted from $dir/checkpoint_001000.tsrc at step 1000" "$work/latest_run.out" ||
      fail "--restart $how: $(grep restarted "$work/latest_run.out")"
  done
  mkdir -p "$work/none"
  run "$work/none_run" "$short_config" --output "$work/none" --restart latest
  failed "$work/none_run" "--restart latest: the folder '$work/none' holds no checkpoint"
  ;;
non_utf8)
  config=$work/cavity_$'\xff'.json
  cp "$short_config" "$config"
  run "$work/latin" "$config" --output "$work/out"
  [[ $rc -eq 0 ]] || fail "the run failed: $(cat "$work/latin.err")"
  grep -qF '"config": "'"$work"'/cavity_\\xff.json"' "$work/out/summary.json" ||
    fail "summary.json: $(grep config "$work/out/summary.json")"
  ;;
shell)
  for how in alone exec; do
    dir=$work/job_$how
    if [[ $how == alone ]]; then # "; true": the shell cannot exec its last command
      bash -c "\"\$0\" run $long_config --output $dir; true" "$tessera" >"$work/$how.out" 2>&1 &
    else
      bash -c "exec ${mpi[*]} \"\$0\" run $long_config --output $dir" "$tessera" >"$work/$how.out" 2>&1 &
    fi
    long=$!
    wait_for "$dir/fields_000020.vti"
    kill -TERM "$long"
    wait "$long" 2>/dev/null || true
    long=""
    for ((i = 0; i < 100; ++i)); do
      grep -q '"status": "interrupted"' "$dir/summary.json" 2>/dev/null && break
      sleep 0.1
    done
    if ! grep -q '"status": "interrupted"' "$dir/summary.json" 2>/dev/null; then
      pkill -KILL -f -- "--output $dir" || true # the run the shell left behind
      fail "$how: no interrupted summary 10 s after the shell's SIGTERM: $(cat "$work/$how.out")"
    fi
    for ((i = 0; i < 100; ++i)); do # it ends once its summary is written
      pgrep -f -- "--output $dir" >/dev/null || break
      sleep 0.1
    done
    pgrep -f -- "--output $dir" >/dev/null && fail "$how: tessera still runs 10 s after its summary"
    check_manifest interrupted "$dir" || fail "$how: the manifest"
  done
  ;;
signal)
  for sig in TERM INT; do
    dir=$work/stopped_$sig
    # with checkpoints on (none due before), the stopping step writes one
    if [[ $sig == TERM ]]; then start_long "$dir" --set output.checkpoint_every=1000000
    else start_long "$dir"; fi
    wait_for "$dir/fields_000020.vti"
    kill -"$sig" "$long"
    set +e
    wait "$long"
    set -e
    long=""
    # mpirun passes SIGINT on to the ranks as SIGTERM
    grep -Eq "^summary: stopped by SIG(TERM|INT) after step [1-9][0-9]* of 1000000" "$work/long.out" ||
      fail "SIG$sig: $(cat "$work/long.out" "$work/long.err")"
    if grep -q "tessera: error" "$work/long.err"; then fail "SIG$sig: $(cat "$work/long.err")"; fi
    grep -q '"status": "interrupted"' "$dir/summary.json" || fail "SIG$sig: summary.json"
    grep -Eq '"signal": "SIG(TERM|INT)"' "$dir/summary.json" || fail "SIG$sig: no signal in summary.json"
    check_manifest interrupted "$dir" || fail "SIG$sig: the manifest"
    if [[ $sig == TERM ]]; then
      step=$(sed -n 's/^summary: stopped by SIG[A-Z]* after step \([0-9]*\) .*/\1/p' "$work/long.out")
      ckpt=$(printf '%s/checkpoint_%06d.tsrc' "$dir" "$step")
      [[ -f $ckpt ]] || fail "SIGTERM: no checkpoint of step $step: $(ls "$dir")"
      grep -q "\"checkpoint\": \"$(basename "$ckpt")\"" "$dir/summary.json" ||
        fail "SIGTERM: summary.json does not name $ckpt"
      "${mpi[@]}" "$tessera" run "$long_config" --output "$dir" --restart "$ckpt" \
        --steps $((step + 5)) >"$work/restart.out" 2>&1 || fail "SIGTERM: $(cat "$work/restart.out")"
      grep -q "restarted from $ckpt at step $step" "$work/restart.out" ||
        fail "SIGTERM: $(cat "$work/restart.out")"
    else
      ls "$dir"/checkpoint_*.tsrc >/dev/null 2>&1 && fail "SIGINT: a checkpoint without checkpoints on"
    fi
  done
  ;;
*) fail "unknown case" ;;
esac
echo "ok: $what"
