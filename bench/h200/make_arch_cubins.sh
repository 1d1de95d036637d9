#!/usr/bin/env bash
# Builds bench/h200/arch_cubins.cu for plain, arch-specific ('a') and family ('f') targets with
# nvcc (CUDA 13.0 on the H200 machine), and records what cuobjdump says of each cubin: target
# name and header flags (*.head.txt), resources (*.res.txt), ptxas -v (*.ptxas.txt); also a host
# object holding sm_90a and sm_100a cubins and cuobjdump's list of them. Writes all.tgz to $OUT.
# Usage: OUT=dir bench/h200/make_arch_cubins.sh [path/to/arch_cubins.cu]
set -u
SRC=$(realpath "${1:-bench/h200/arch_cubins.cu}")
export PATH=$PATH:/usr/local/cuda/bin
W=$(mktemp -d) && cd "$W" || exit 1
nvcc --version | tail -1
for t in 90 90a 100 100a 100f 120a; do
  c=arch_sm_$t
  nvcc -cubin -gencode arch=compute_$t,code=sm_$t -Xptxas -v -o $c.cubin "$SRC" > $c.ptxas.txt 2>&1 || { cat $c.ptxas.txt; continue; }
  cuobjdump -res-usage $c.cubin > $c.res.txt 2>&1
  cuobjdump -sass $c.cubin | grep -E 'code for|headerflags' | sort -u > $c.head.txt
done
nvcc -c -o arch_fatbin.o -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100a,code=sm_100a "$SRC"
cuobjdump -lelf arch_fatbin.o > arch_fatbin_o.lelf.txt 2>&1
tar czf "${OUT:-.}/all.tgz" ./*.cubin ./*.txt arch_fatbin.o
cat arch_sm_90.res.txt arch_sm_90.ptxas.txt
