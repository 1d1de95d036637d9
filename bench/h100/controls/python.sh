#!/usr/bin/env bash
# The noise floor of a Python comparison (issue 43): `kernel run --python … --controls LEDGER`
# of the Triton vector kernel of bench/h100/gate/k_python.py against itself six times (each
# side loads the file as a module of its own; the capture compares their cubins), then against
# a copy with 2% of its blocks done twice, whose verdict is shown beside the floor the A/A runs
# calibrated. Through the device tool, with the kernelab wheel carried at .carry/*.whl:
#   bash bench/h100/controls/python.sh [ROUNDS]
set -uo pipefail
rounds=${1:-20}
top=$(pwd)
out=${OUT:-/tmp/controls-py}
mkdir -p "$out"
python3 -m pip install --quiet --root-user-action=ignore --no-deps --force-reinstall .carry/*.whl
site=$(python3 -c 'import kernelab, os; print(os.path.dirname(kernelab.__file__))')
cp python/kernelab/*.py "$site/"
export XDG_STATE_HOME=/tmp/state
w=$(mktemp -d)
cp "$top/bench/h100/gate/k_python.py" "$w/k.py"
sed 's/^EXTRA = 0.0$/EXTRA = 0.02/' "$w/k.py" > "$w/k2.py"
ledger="$out/controls.jsonl"
run() { # name candidate-file
  python3 -m kernelab kernel run --python "$w/k.py:run" "$w/$2:run" --inputs "$w/k.py:make" \
    --outputs 1 --rounds "$rounds" --controls "$ledger" --format json > "$out/$1.json" 2> "$out/$1.err"
  echo "$1: exit $? $(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
a = d.get('analysis') or {}
l = d.get('launched') or {}
print(a.get('verdict'), round(a.get('ratio') or 0, 4), [p['identical'] for p in l.get('pairs', [])], d.get('noise_floor'))" "$out/$1.json")"
}
for i in 1 2 3 4 5 6; do run "aa_$i" k.py; done
run planted k2.py
python3 -m kernelab kernel run --python "$w/k.py:run" "$w/k2.py:run" --inputs "$w/k.py:make" \
  --outputs 1 --rounds "$rounds" --controls "$ledger" --format md > "$out/planted.md" 2>/dev/null
grep -i -B1 -A2 "noise floor" "$out/planted.md"
wc -l "$ledger"
