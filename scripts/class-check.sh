#!/usr/bin/env bash
# grade-class on a GPU machine, checked: a folder of 20 step 4 submissions (references, slower
# correct kernels, broken kernels, skeletons, cheats, one that does not compile) graded by one
# command into JSON, CSV and the HTML report, then every file graded alone by `grade` with the
# same flags: every verdict must be the same. Prints the time per submission and for the folder.
#   scripts/class-check.sh BUNDLE OUT [SKELETONS]    (run from the repository, for labs/ and the kernels)
set -euo pipefail
bundle=$(cd "$1" && pwd); out=$2; skel=${3:-}
mkdir -p "$out"; out=$(cd "$out" && pwd)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
grader=$bundle/bin/grader
subs=$out/submissions; rm -rf "$subs" "$out/class"; mkdir -p "$subs"
# As a submission system exports them: a folder per student, names with spaces and commas.
add() { mkdir -p "$subs/$1"; cp "$2" "$subs/$1/kernel.cu"; }
add "Ada, Lovelace_1001" step04-bankfree/src/kernel.cu
add "Grace Hopper_1002" step04-bankfree/src/kernel.cu
add "Alan Turing_1003" step04-bankfree/src/kernel.cu
add "Edsger Dijkstra_1004" step03-smem/src/kernel.cu
add "Barbara Liskov_1005" step02-coalesce/src/kernel.cu
add "Donald Knuth_1006" step01-naive/src/kernel.cu
for f in labs/broken/step04-bankfree/*.cu; do add "broken $(basename "$f" .cu)_2000" "$f"; done
for f in printf-verdicts lazy-perf-shape lazy-finite-c replay-last guard-sniff write-beyond-guard tf32-at-large-k leak-proc-cmdline; do
  add "cheat ${f}_3000" "labs/cheats/$f.cu"
done
[ -n "$skel" ] && add "skeleton_4000" "$skel/step04.cu"
printf '#include "sgemm.cuh"\nextern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) { oops = 1; }\n' > "$subs/typo.cu"
n=$(ls "$subs" | wc -l)
flags=(--hidden labs/hidden-example.txt --perf-shape 2048 --timeout 10 --budget 90)
start=$(date +%s)
"$grader" grade-class 04 --submissions "$subs" --out "$out/class" "${flags[@]}" 2>&1 | tail -3
class_s=$(( $(date +%s) - start ))
echo "grade-class: $n submissions in $class_s s ($(( class_s / n )) s each)"
ls "$out/class"
# Every student alone, with the same flags: the same verdict.
python3 - "$out/class" "$grader" "${flags[@]}" <<'PY'
import json, subprocess, sys, tempfile, time
out, grader, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
roster = json.load(open(f"{out}/roster.json"))["students"]
same, rows = 0, []
for s in roster:
    if "file" not in s:
        continue
    card = json.load(open(f"{out}/students/{s['id']}.json"))
    alone = tempfile.mktemp(suffix=".json")
    t = time.time()
    subprocess.run([grader, "grade", "04", s["file"], "--json", alone] + flags, capture_output=True)
    mine = json.load(open(alone))
    def kind(c):
        fails = [t for t in c["tests"] if t["max_score"] > 0 and t["score"] == 0]
        text = " ".join(t["name"] + ": " + t["output"] for t in fails[:1]).lower()
        for k in ["include policy", "does not compile", "compiler stopped", "budget", "timed out", "timed run", "memory errors", "wrote outside", "modified", "crashed", "exact answer"]:
            if k in text:
                return k
        return "wrong results" if fails else ("timed run wrong" if "wrong result" in (c.get("speed_note") or "") else "passed")
    # The outcome, not case by case: a racy kernel fails different cases in different runs.
    verdict = lambda c: (kind(c), c["score"] >= 99.5, c["score"] >= 70)
    ok = verdict(card) == verdict(mine)
    same += ok
    rows.append(f"| {s['id']} | {card['score']:.1f} | {mine['score']:.1f} | {'same' if ok else 'DIFFERENT'} | {time.time() - t:.1f} |")
print("| student | grade-class | grade alone | verdict | seconds alone |\n|---|---:|---:|---|---:|")
print("\n".join(rows))
print(f"{same} of {len(rows)} verdicts equal to grade's")
sys.exit(0 if same == len(rows) else 1)
PY
