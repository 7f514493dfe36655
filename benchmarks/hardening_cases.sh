#!/bin/bash
# Issue 15 part A: the bad-path / bad-value / refused-write cases, one line each (exit code,
# what is left in the output directory, first stderr line). Usage:
#   benchmarks/hardening_cases.sh [SRC]   (SRC: the src/ directory to run, default ./src)
# The disk-full and read-only cases mount small tmpfs file systems and need root; they are
# skipped otherwise. Results: docs/results.md, "Hardening".
set -u
SRC=$(realpath "${1:-src}")
PY=${PYTHON:-.venv/bin/python}
PY=$(command -v "$PY" || realpath "$PY")
WORK=$(mktemp -d)
trap 'umount "$WORK/full" "$WORK/ro" 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK"
am() { PYTHONPATH=$SRC timeout 120 "$PY" -c "from anonymatch.cli import entry; entry()" "$@"; }
"$PY" - <<'PYEOF'
import random
random.seed(1)
with open("t.csv", "w") as f:
    f.write("name,age,sex,zip,income\n")
    for i in range(40):
        f.write(f"p{i},{random.randint(20, 70)},{random.choice('MF')},"
                f"{random.choice(['100', '200', '300'])},{random.choice(['<=50K', '>50K'])}\n")
PYEOF
printf "age,sex,inc\n1e19,M,a\n2e19,F,b\n3e19,M,c\n-1e300,F,d\n1e300,M,e\n5,F,f\n" > big.csv
printf "age,sex,inc\n9007199254740993,M,a\n2,F,b\n3,M,c\n4,F,d\n" > big2.csv
printf "age,sex,inc\n1.7e308,M,a\n-1.7e308,F,b\n3,M,c\n4,F,d\n" > max.csv
printf "age,sex,inc\ninf,M,a\n2,F,b\n3,M,c\n4,F,d\n" > inf.csv
printf "row,col\n0,1\n1000000000000,2\n" > sp_big.csv
printf "source,target\n0,1\n1,2\n2,0\n" > e.csv
printf "1 2\n2 3\n1 3\n1 2\n2 3\n1 3\n" > s.dat
B="--k 3 --qi age,sex,zip --numeric age --identifiers name -q"
case_() {
    name=$1; dir=$2; shift 2
    "$@" >/dev/null 2>err.txt; rc=$?
    err=$(grep -v Warning err.txt | grep -v '^  ' | head -1)
    printf "%-30s| rc %-3s| left: [%s] | %s\n" "$name" "$rc" "$(ls -A "$dir" | tr '\n' ' ')" "${err:0:160}"
}
fresh() { rm -rf out; mkdir out; }
am anonymize t.csv -o r.csv $B >/dev/null 2>&1
fresh; case_ "1 report == -o" out am anonymize t.csv -o out/r.csv $B --report out/r.csv
fresh; case_ "1 report == ./-o" out am anonymize t.csv -o out/r.csv $B --report ./out/r.csv
fresh; case_ "1 seed-file == -o" out am anonymize t.csv -o out/r.csv $B --seed-file out/r.csv
fresh; case_ "1 sets report == -o" out am anonymize-sets s.dat -o out/r.jsonl --k 2 -q --report out/r.jsonl
fresh; case_ "10 -o out.xlsx" out am anonymize t.csv -o out/r.xlsx $B
fresh; case_ "10 sets -o out.csv" out am anonymize-sets s.dat -o out/r.csv --k 2 -q
fresh; case_ "5 verify not k-anonymous" out am verify t.csv r.csv --k 30 --qi age,sex,zip --numeric age
fresh; case_ "6 --seed -1" out am anonymize t.csv -o out/r.csv $B --seed -1
fresh; case_ "6 --quotechar ab" out am anonymize t.csv -o out/r.csv $B --quotechar ab
fresh; case_ "6 sparse row id 1e12" out am anonymize-sparse sp_big.csv -o out/r.csv --k 2 -q
fresh; case_ "6 graph --n 1e12" out am anonymize-graph e.csv -o out/g.csv --k 3 --n 1000000000000 -q
fresh; case_ "7 QI 1e19/±1e300" out am anonymize big.csv -o out/r.csv --k 2 --qi age,sex --numeric age -q
fresh; case_ "7 QI 2^53+1" out am anonymize big2.csv -o out/r.csv --k 2 --qi age,sex --numeric age -q
fresh; case_ "7 QI ±1.7e308" out am anonymize max.csv -o out/r.csv --k 2 --qi age,sex --numeric age -q
fresh; case_ "7 QI inf" out am anonymize inf.csv -o out/r.csv --k 2 --qi age,sex --numeric age -q
if [ "$(id -u)" = 0 ] && mkdir -p full && mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
    dd if=/dev/zero of=full/fill bs=4k count=16 status=none 2>/dev/null
    case_ "3 disk full (release)" full am anonymize t.csv -o full/r.csv $B
    rm full/fill; dd if=/dev/zero of=full/fill bs=4k count=15 status=none  # one page free
    case_ "3 disk full (report only)" full am anonymize t.csv -o full/r.csv $B --report full/m.json
    umount full
    mkdir -p ro && mount -t tmpfs -o size=1m,ro tmpfs ro
    case_ "3 read-only fs" ro am anonymize t.csv -o ro/r.csv $B --report ro/m.json
    umount ro
else
    echo "3 (disk full, read-only): skipped, needs root and tmpfs"
fi
