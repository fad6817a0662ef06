#!/usr/bin/env bash
# The class grader against a real Slurm (no GPU: --no-gpu grades the compile stage, the include
# policy and the static checks): a folder of submissions as a job array, collected twice (the
# same report), every verdict equal to `grade`'s for the same file, a cancelled task recorded
# as such and graded again alone.
#   .ci/slurm-test.sh GRADER
set -euo pipefail
grader=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/slurm-test.XXXXXX)
trap '"$root/.ci/slurm-down.sh" "$work/cluster"' EXIT
"$root/.ci/slurm-up.sh" "$work/cluster"
export SLURM_CONF=$work/cluster/slurm.conf

subs=$work/submissions
mkdir -p "$subs/Doe, Jane_1001" "$subs/empty" "$subs/two" "$subs/O'Brien Pat_1002"
cp "$root/step04-bankfree/src/kernel.cu" "$subs/Doe, Jane_1001/kernel.cu"
cp "$root/step01-naive/src/kernel.cu" "$subs/O'Brien Pat_1002/my kernel.cu"
cp "$root/step05-threadtile-float4/src/kernel.cu" "$subs/two/a.cu"
cp "$root/step04-bankfree/src/kernel.cu" "$subs/two/b.cu"
cp "$root/labs/cheats/leak-proc-cmdline.cu" "$subs/mallory.cu"
cp "$root/labs/cheats/compile-bomb.cu" "$subs/bomb.cu"
printf '#include "sgemm.cuh"\nextern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) { oops = 1; }\n' > "$subs/typo.cu"
# A link to a file the submission does not own, and a name that reads as an option.
ln -s "$root/labs/hidden-example.txt" "$subs/link.cu"
cp "$root/step04-bankfree/src/kernel.cu" "$subs/--help.cu"
out=$work/out

wait_for() { # job id
  for _ in $(seq 300); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    if squeue -h -j "$1" -o %r | grep -qE 'PartitionConfig|ReqNodeNotAvail'; then
      echo "job $1 cannot start:"; squeue -j "$1"; exit 1
    fi
    sleep 1
  done
  echo "job $1 did not finish"; squeue; exit 1
}
job_of() { sed -n 's/^job //p' | tail -1; }

echo "== submit the class"
# Shown through the inherited stderr: `tee /dev/stderr` would open the caller's log anew and, when
# it is a file, truncate it.
submitted=$("$grader" grade-class 04 --submissions "$subs" --out "$out" --no-gpu --slurm --budget 20 --throttle 3)
echo "$submitted" >&2
job=$(echo "$submitted" | job_of)
wait_for "$job"
"$grader" grade-class 04 --out "$out" --collect
cp "$out/report.html" "$work/report-1.html"; cp "$out/class.csv" "$work/class-1.csv"
"$grader" grade-class 04 --out "$out" --collect
cmp "$out/report.html" "$work/report-1.html" && cmp "$out/class.csv" "$work/class-1.csv"
echo "collecting twice gives the same report"
cat "$out/class.csv"

echo "== every verdict is grade's"
python3 - "$out" "$grader" <<'PY'
import json, subprocess, sys, os, tempfile
out, grader = sys.argv[1], sys.argv[2]
roster = json.load(open(f"{out}/roster.json"))["students"]
checked = 0
for s in roster:
    if "file" not in s:
        continue
    card = json.load(open(f"{out}/students/{s['id']}.json"))
    alone = tempfile.mktemp(suffix=".json")
    subprocess.run([grader, "grade", "--no-gpu", "--budget", "20", "--json", alone, "--", "04", s["file"]], check=True, capture_output=True)
    mine = json.load(open(alone))
    verdict = lambda c: (round(c["score"], 3), [(t["name"], t["score"] > 0 or t["max_score"] == 0) for t in c["tests"]])
    assert verdict(card) == verdict(mine), (s["id"], verdict(card), verdict(mine))
    checked += 1
print(f"{checked} verdicts equal to grade's")
# The bomb meets one of two limits: the compiler's CPU seconds, or on a loaded machine the 20 s
# of wall time first (the budget). Either is a verdict.
expected = {"doe-jane_1001": ["compiles"], "o-brien-pat_1002": ["compiles"], "empty": ["no submission found"],
            "two": ["several .cu files"], "mallory": ["an include that is not allowed"], "typo": ["does not compile"],
            "bomb": ["the compiler ran out of time or memory", "grading budget exhausted"],
            "link": ["refused: a symbolic link"], "help": ["compiles"]}
staff = os.listdir(f"{out}/staff")
assert len(staff) == sum("file" in s for s in roster), ("a staff record per graded student", staff)
rows = {l.split(",")[0]: l for l in open(f"{out}/class.csv").read().splitlines()[1:]}
for sid, wants in expected.items():
    assert any(w in rows[sid] for w in wants), (sid, rows[sid])
print("every student's result is the expected one")
PY

echo "== a cancelled task is recorded, then graded again alone"
job=$("$grader" grade-class 04 --out "$out" --no-gpu --slurm --only bomb --budget 120 | job_of)
for _ in $(seq 60); do [ "$(squeue -h -j "$job" -o %t)" = R ] && break; sleep 1; done
scancel "$job"; wait_for "$job"
"$grader" grade-class 04 --out "$out" --collect
grep -q '^bomb,.*task cancelled' "$out/class.csv" || { echo "the cancelled task is not recorded"; cat "$out/class.csv"; exit 1; }
job=$("$grader" grade-class 04 --out "$out" --no-gpu --slurm --only bomb --budget 20 | job_of)
wait_for "$job"
"$grader" grade-class 04 --out "$out" --collect
# Graded again, the bomb meets one of two limits: the compiler's CPU seconds, or on a loaded
# machine the 20 s of wall time first (the budget). Either is a verdict; "task cancelled" is not.
grep -Eq '^bomb,.*(the compiler ran out of time or memory|grading budget exhausted)' "$out/class.csv" ||
  { echo "bomb not graded again"; cat "$out/class.csv"; exit 1; }
# The report, for the layout check that follows.
[ -n "${CLASS_REPORT_DIR:-}" ] && cp -r "$out/report.html" "$out/cards" "$CLASS_REPORT_DIR/"
echo "slurm test: passed"
