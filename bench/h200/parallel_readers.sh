#!/usr/bin/env bash
# Issue 30's parallel readers on a machine with more cores (the device machines: 16 cores), in
# one command: the Kineto and Nsight Systems benchmarks on two CPUs of different cores
# (`taskset`: a quiet 2-core machine), the thread sweep 1, 2, 4, 8, 16 (bench/threads_sweep.py)
# and the same benchmarks on every core. Inputs are generated here, in bench/out/.
# Binaries: $R (read_trace), $C (kernelab), $G (gen_kineto); else bins/NAME.gz (stripped and
# gzipped, as carried to a device machine) unpacked into bin/; else $CARGO_TARGET_DIR/release.
# Usage: [KSIZE=200] [DOUBLINGS=11] bench/h200/parallel_readers.sh 2>&1 | tee log
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
t0=$(date +%s)
step() { echo; echo "=== [$(( $(date +%s) - t0 )) s] $* | loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"; }
step info
date -u; uname -r; nproc; lscpu; lscpu -e; free -g; df -h . | tail -1
python3 -c 'import sqlite3, sys; print("python", sys.version.split()[0], sys.executable, "sqlite", sqlite3.sqlite_version)'
which taskset gzip; ls -l /usr/bin/time || { [ -x bins/time ] && cp bins/time /usr/bin/time && echo "carried /usr/bin/time"; }
top -bn1 | head -15
T=${CARGO_TARGET_DIR:-target}/release
if [ -z "${R:-}" ] && [ -s bins/read_trace.gz ]; then
  mkdir -p bin
  for f in read_trace gen_kineto kernelab; do gzip -dc bins/$f.gz > bin/$f && chmod +x bin/$f; done
  R=bin/read_trace C=bin/kernelab G=bin/gen_kineto
fi
R=${R:-$T/examples/read_trace} C=${C:-$T/kernelab} G=${G:-$T/examples/gen_kineto}
"$C" --version
# Two CPUs of different cores (lscpu's CORE), so that "2 cores" is not one core's two threads.
P2=$(lscpu -p=CPU,CORE | grep -v '^#' | awk -F, 'NR==1{c0=$2; a=$1; next} $2!=c0 && !b {b=$1} END{print a "," b}')
echo "two-core set: $P2"
step gen
mkdir -p bench/out
K=bench/out/synthetic_${KSIZE:-200}MB.json; N=bench/out/nsys_x${DOUBLINGS:-11}.sqlite
[ -s $K ] || "$G" "${KSIZE:-200}" $K
[ -s $K.gz ] || gzip -6 -c $K > $K.gz &
[ -s $N ] || python3 bench/nsys_big.py $N "${DOUBLINGS:-11}"
wait
ls -l bench/out
step "A. nsys, 2 cores: taskset -c $P2 nsys_parallel.py $N 5"
taskset -c "$P2" python3 bench/nsys_parallel.py $N 5 "$R" "$C" ""
step "B. kineto, 2 cores: taskset -c $P2 kineto_parallel.py $K 9"
taskset -c "$P2" python3 bench/kineto_parallel.py $K 9 "$R" "$C"
step "C. nsys sweep: threads_sweep.py $N 7 1,2,4,8,16 --sql"
python3 bench/threads_sweep.py $N 7 1,2,4,8,16 "$R" "$C" --sql
step "D. kineto sweep: threads_sweep.py $K 9 1,2,4,8,16"
python3 bench/threads_sweep.py $K 9 1,2,4,8,16 "$R" "$C"
# The every-core runs repeat what the sweep measures at 16 threads: skipped when time is short
# (a device call may run 600 s at most).
if [ $(( $(date +%s) - t0 )) -lt 420 ]; then
  step "E. nsys, every core: nsys_parallel.py $N 5"
  python3 bench/nsys_parallel.py $N 5 "$R" "$C" ""
fi
if [ $(( $(date +%s) - t0 )) -lt 480 ]; then
  step "F. kineto, every core: kineto_parallel.py $K 9"
  python3 bench/kineto_parallel.py $K 9 "$R" "$C"
fi
step done
