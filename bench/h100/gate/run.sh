#!/usr/bin/env bash
# `kernelab gate` on the GPU (issue 43): throwaway repositories whose base and head are
# measured in one job. [kernel]: the fixture cubins of fla's recompute_w_u_fwd_kernel "built"
# by copying (head `same`: identical code; head `retuned`: the w4s4 config for w4s3).
# [python]: a Triton vector kernel (k_python.py), head `plant2` with 2% of the blocks done
# twice, head `same` a README change. Through the device tool, with the release binary carried
# gzipped at .carry/kernelab.gz (or KERNELAB_GZ) and the kernelab wheel at .carry/*.whl:
#   bash bench/h100/gate/run.sh
set -uo pipefail
top=$(pwd)
out=${OUT:-/tmp/gate-out}
mkdir -p "$out"
bin=/tmp/kbin
mkdir -p $bin
gunzip -c "${KERNELAB_GZ:-.carry/kernelab.gz}" > $bin/kernelab && chmod +x $bin/kernelab
export PATH=$bin:$PATH
python3 -m pip install --quiet --root-user-action=ignore --no-deps .carry/*.whl
site=$(python3 -c 'import kernelab, os; print(os.path.dirname(kernelab.__file__))')
cp python/kernelab/*.py "$site/"
export KERNELAB_PYTHON=python3 XDG_STATE_HOME=/tmp/state
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
newrepo() { # dir
  rm -rf "$1"; mkdir -p "$1"; cd "$1"
  git init --quiet -b main; git config user.name t; git config user.email t@t.invalid
}
commit() { git add -A; git commit --quiet -m "$1"; }
# [kernel]
newrepo /tmp/gk
mkdir -p src bench .kernelab
cp "$top"/tests/fixtures/code/recompute_w_u_fwd_kernel_w4s3.cubin src/kernel.cubin
cp "$top"/tests/fixtures/code/recompute_w_u_fwd_kernel_w4s3.json src/kernel.json
sed 's|../code/recompute_w_u_fwd_kernel_w4s3.cubin|../build/kernel.cubin|' "$top"/tests/fixtures/kernel/recompute_w4s3_aa.toml > bench/k.toml
echo 'mkdir -p build && cp src/kernel.cubin src/kernel.json build/' > build.sh
echo 'build/' > .gitignore
printf '[build]\ncommand = "sh build.sh"\n\n[kernel]\nspec = "bench/k.toml"\nthreshold = "1%%"\nrounds = 30\n' > .kernelab/gate.toml
commit main
git checkout --quiet -b same main; echo x > README; commit same
git checkout --quiet -b retuned main
cp "$top"/tests/fixtures/code/recompute_w_u_fwd_kernel_w4s4.cubin src/kernel.cubin
cp "$top"/tests/fixtures/code/recompute_w_u_fwd_kernel_w4s4.json src/kernel.json
commit retuned
git checkout --quiet main
for head in same retuned; do
  echo "== [kernel] head $head"
  kernelab gate --repo /tmp/gk --base main --head $head --format json --out "$out/kernel_$head.json" \
    --summary "$out/kernel_$head.md" --record "$out/bundle_kernel_$head" > "$out/kernel_$head.txt" 2>&1
  echo "exit $?"; cat "$out/kernel_$head.md"
done
# [python]
newrepo /tmp/gp
mkdir -p bench .kernelab
cp "$top"/bench/h100/gate/k_python.py bench/k.py
printf '[python]\nmodule = "bench/k.py"\nfunction = "run"\ninputs = "make"\nthreshold = "1%%"\noptions = ["--outputs", "1", "--rounds", "30"]\n' > .kernelab/gate.toml
commit main
git checkout --quiet -b plant2 main; sed -i 's/^EXTRA = 0.0$/EXTRA = 0.02/' bench/k.py; commit plant2
git checkout --quiet -b same main; echo x > README; commit same
git checkout --quiet main
for head in plant2 same; do
  echo "== [python] head $head"
  kernelab gate --repo /tmp/gp --base main --head $head --format json --out "$out/python_$head.json" \
    --summary "$out/python_$head.md" --record "$out/bundle_python_$head" > "$out/python_$head.txt" 2>&1
  echo "exit $?"; cat "$out/python_$head.md"
done
cd "$top"
for b in "$out"/bundle_*; do kernelab report "$b" --format md > "$b.report.md" 2>&1; kernelab report check --bundle "$b" "$b.report.md" > "$b.check.txt" 2>&1; echo "$b report check exit $?"; done
