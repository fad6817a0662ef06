#!/usr/bin/env bash
# The grader on a GPU machine, from a bundle copied to a fresh directory with no source tree beside
# it, in parts (each fits in ten minutes on one GPU):
#   cheats  the bundle's tests/grader-cheats: every kernel of labs/cheats and labs/broken, and the
#           fixtures a source tree cannot hold (a link to the hidden cases, a FIFO, a folder,
#           Latin-1 bytes, a NUL, an empty and an oversize file, a name that reads as an option);
#   hostile its trial class/hostile-folder: a class of such files under hostile names;
#   class   grade-class over a folder of step 4 submissions made here from this repository: the
#           references, slower correct kernels, the broken kernels, the cheats, one that does not
#           compile (and a skeleton with SKELETONS=DIR of `cargo xtask handout` files), under
#           names with spaces, quotes, a leading `-`, `$()`, backticks, `;`, HTML, a newline,
#           Latin-1 bytes and a formula, beside links, a FIFO, a NUL, an empty and an oversize
#           file; each student's result against the expected one, no hidden case or secret in what
#           students see, the printing kernel's hidden output in the staff's record alone, nothing
#           created outside the output folder;
#   alone   every student of the last `class` (kept in OUT) graded again alone by `grade` with the
#           same flags: the same verdict (a racy kernel may fail other cases, not another way).
# Each part adds its rows to OUT/table.md; the table of expected against got is printed last.
#   scripts/class-check.sh BUNDLE OUT [cheats] [hostile] [class] [alone]   (default: all but alone)
# Run from the repository (the class folder's kernels come from it).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "$1" && pwd); out=$2; shift 2
parts=${*:-cheats hostile class}
mkdir -p "$out"; out=$(cd "$out" && pwd)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
has() { [[ " $parts " == *" $1 "* ]]; }
fresh=$(mktemp -d /tmp/class-check.XXXXXX)
cp -r "$bundle" "$fresh/bundle"
cd "$fresh"
table=$out/table.md
[ -f "$table" ] || printf '| part | submission | expected | got | score | as expected |\n|---|---|---|---|---:|---|\n' > "$table"
status=0

# A CHEAT line is the card of one kernel (its reason may run over several lines); the next line that
# starts with ok or FAILED, the test's verdict.
cheats() { # name, trials of tests/grader-cheats to run (its filter arguments)
  local name=$1 start; shift
  start=$(date +%s)
  ./bundle/tests/grader-cheats "$@" > "$out/grader-$name.log" 2>&1 || status=1
  echo "tests/grader-cheats $*: $(grep -E '^test result' "$out/grader-$name.log" | tail -1) in $(( $(date +%s) - start )) s"
  awk -F'|' -v part="$name" '/CHEAT \|/ { row = "| " part " | " $2 " | " $3 " | " $5 " | " $4 " | "; next }
      /CLASS \|/ { row = "| " part " | " $2 " | every row, report and file as expected | " $3 " | - | "; next }
      row != "" && /^(ok|FAILED)/ { v = ($0 ~ /^ok/) ? "yes" : "NO"; gsub(/ +/, " ", row); print row v " |"; row = "" }
      /class\/hostile-folder .*FAILED/ { print "| " part " | a hostile class folder | every row, report and file as expected | FAILED (see the log) | - | NO |" }' \
    "$out/grader-$name.log" >> "$table"
}
has cheats && cheats cheats --skip class/
has hostile && cheats hostile class/

if has class || has alone; then
  export GRADER=$fresh/bundle/bin/grader ROOT=$root OUT=$out TABLE=$table PARTS=$parts FRESH=$fresh
  python3 - <<'PY' || status=1
import csv, json, os, re, subprocess, sys, tempfile, time
grader, root, out, table, fresh = (os.environ[k] for k in ["GRADER", "ROOT", "OUT", "TABLE", "FRESH"])
parts = os.environ["PARTS"].split()
flags = ["--perf-shape", "2048", "--timeout", "10", "--budget", "90"]
# The submissions and the class's output stay in OUT (for `alone`, and to keep); the grading's
# working directory and TMPDIR are fresh, to see that nothing is left there.
subs, cls, hidden, elsewhere = (os.path.join(out, d) for d in ["submissions", "class", "hidden.txt", "elsewhere"])
cwd, tmp = os.path.join(fresh, "cwd"), os.path.join(fresh, "tmp")
secret = "SECRET%016x" % int.from_bytes(os.urandom(8), "big")
read = lambda p: open(os.path.join(root, p), "rb").read()
ref, cheat = read("step04-bankfree/src/kernel.cu"), lambda n: read(f"labs/cheats/{n}.cu")
PASSED = "passed"
# (exported name, how it is made, the expected result: a regular expression over class.csv's).
students = [
    ("Ada, Lovelace_1001", {"kernel.cu": ref}, PASSED),
    ("$(touch pwned)_1002.cu", ref, PASSED),
    ("-rf_1003.cu", ref, PASSED),
    ("O'Brien \"Pat\" <b>_1004", {"my kernel.cu": read("step03-smem/src/kernel.cu")}, PASSED),
    (b"caf\xe9_1005.cu", read("step02-coalesce/src/kernel.cu"), PASSED),
    # Step 1's kernel maps blockIdx.x to rows and step 4's launch to columns: wrong where M != N.
    ("new\nline_1006.cu", read("step01-naive/src/kernel.cu"), "wrong results"),
    ("latin1 comment_1007.cu", ref + b"// caf\xe9, na\xefve\n", PASSED),
    ("broken race_2000", {"kernel.cu": read("labs/broken/step04-bankfree/race.cu")}, "wrong results"),
    ("broken edge_2001", {"kernel.cu": read("labs/broken/step04-bankfree/edge-off-by-one.cu")}, "wrong results"),
    ("broken oob_2002", {"kernel.cu": read("labs/broken/step04-bankfree/oob-write.cu")}, "wrote outside|memory errors|wrong results"),
    ("broken loop_2003", {"kernel.cu": read("labs/broken/step04-bankfree/infinite-loop.cu")}, "timed out|budget"),
    ("`touch pwned2`_3000.cu", cheat("printf-verdicts"), "wrong results"),
    ("a; touch pwned3 #_3001.cu", cheat("lazy-perf-shape"), "a timed run produced a wrong result"),
    ("<img src=x onerror=alert(1)>_3002.cu", cheat("lazy-finite-c"), PASSED),
    ("cheat replay-last_3003.cu", cheat("replay-last"), "passed|a timed run produced a wrong result|wrong results"),
    ("cheat guard-sniff_3004.cu", cheat("guard-sniff"), PASSED),
    ("cheat write-beyond-guard_3005.cu", cheat("write-beyond-guard"), "wrote outside|memory errors"),
    ("cheat tf32_3006.cu", cheat("tf32-at-large-k"), "precision probe|wrong results"),
    ("cheat leak_3007.cu", cheat("leak-proc-cmdline"), "an include that is not allowed"),
    ("=1+1 printf-hidden_3008.cu", cheat("printf-hidden-cases"), PASSED),
    ("cheat trap_3009.cu", cheat("fault-trap-timed"), "a fault in a timed run"),
    ("cheat wild pointer_3010.cu", cheat("fault-illegal-address-timed"), "a fault in a timed run"),
    ("cheat local oom_3011.cu", cheat("fault-local-oom"), "a fault on the GPU|budget"),
    ("cheat no-sgemm_3012.cu", cheat("no-sgemm"), "no `sgemm` kernel"),
    ("typo.cu", b'#include "sgemm.cuh"\nextern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) { oops = 1; }\n', "does not compile"),
    ("link_5001.cu", ("link", hidden), "refused: a symbolic link"),
    ("linked folder_5002", ("link", elsewhere), "refused: a symbolic link"),
    ("fifo_5003.cu", ("fifo",), "refused: not a regular file"),
    ("nul_5004.cu", ref + b"\0", "refused: a NUL byte"),
    ("empty_5005.cu", b"", "refused: empty"),
    ("oversize_5006.cu", b"/" * ((1 << 20) + 1), "refused: too large"),
    ("two_5007", {"a.cu": ref, "b.cu": ref}, "several .cu files"),
    ("nothing_5008", {"notes.txt": b"x"}, "no submission"),
]
if os.environ.get("SKELETONS"):
    students.append(("skeleton_4000", {"kernel.cu": open(os.path.join(os.environ["SKELETONS"], "step04.cu"), "rb").read()}, "wrong results"))

def make(path, what):
    if isinstance(what, dict):
        os.mkdir(path)
        for name, inner in what.items():
            make(os.path.join(path, os.fsencode(name)), inner)
    elif isinstance(what, tuple):
        os.symlink(what[1], path) if what[0] == "link" else os.mkfifo(path)
    else:
        open(path, "wb").write(what)

def row(name, expected, got, score, ok):
    text = name.decode("latin-1") if isinstance(name, bytes) else name
    cells = [c.replace("|", "/").replace("\n", "\\n") for c in [text, expected, got]]
    open(table, "a").write(f"| {parts_label} | {cells[0]} | {cells[1]} | {cells[2]} | {score} | {'yes' if ok else 'NO'} |\n")
    return ok

shown = lambda n: (n.decode("latin-1").replace("\xe9", "\ufffd") if isinstance(n, bytes) else n).replace("\n", "\\n")
ok_all = True
if "class" in parts:
    parts_label = "class"
    subprocess.run(["rm", "-rf", subs, cls, elsewhere], check=True)
    for d in [subs, cwd, tmp, elsewhere]:
        os.makedirs(d, exist_ok=True)
    open(hidden, "w").write(f"# {secret}\n" + read("labs/hidden-example.txt").decode())
    open(os.path.join(elsewhere, "kernel.cu"), "wb").write(ref)
    for name, what, _ in students:
        make(os.path.join(os.fsencode(subs), os.fsencode(name)), what)
    before = sorted(os.listdir(subs))
    start = time.time()
    run = subprocess.run([grader, "grade-class", "04", "--submissions", subs, "--out", cls, "--hidden", hidden] + flags,
                         cwd=cwd, env=dict(os.environ, TMPDIR=tmp), capture_output=True, text=True)
    seconds = time.time() - start
    print(run.stdout[-2000:], run.stderr[-1500:])
    print(f"grade-class: {len(students)} entries in {seconds:.0f} s (exit {run.returncode})")
    roster = {s["name"]: s for s in json.load(open(f"{cls}/roster.json"))["students"]}
    rows = {r["id"]: r for r in csv.DictReader(open(f"{cls}/class.csv", newline=""))}
    for name, _, expected in students:
        s = roster.get(shown(name))
        r = rows.get(s["id"]) if s else None
        got = f"{r['result']}: {r['reason'][:90]}" if r else "no row"
        ok_all &= row(name, expected, got, r["score"] if r else "-", bool(r) and re.search(expected, r["result"]) is not None)
    # What students and the reports see: no secret, no hidden case; the staff's records apart.
    seen = [f"{cls}/class.csv", f"{cls}/report.html"] + [f"{cls}/{d}/{f}" for d in ["students", "cards"] for f in os.listdir(f"{cls}/{d}")]
    leaks = [p for p in seen if any(x in open(p, errors="replace").read() for x in [secret, "257x129x65", "257 129 65"])]
    ok_all &= row("the cards, class.csv and report.html", "no hidden case, no secret", ", ".join(leaks) or "none", "-", not leaks)
    pid = roster[shown("=1+1 printf-hidden_3008.cu")]["id"]
    staff, card = open(f"{cls}/staff/{pid}.txt").read(), open(f"{cls}/students/{pid}.json").read()
    split = "CASE 257 129 65" in staff and "CASE 33 31 32" in card
    ok_all &= row("the printing kernel", "public output on the card, hidden in the staff's record", "split" if split else "NOT split", "-", split)
    made = [p for p in [cwd, tmp] if os.listdir(p)] + [p for p in ["pwned", "pwned2", "pwned3"] if os.path.exists(os.path.join(cwd, p))]
    made += [] if sorted(os.listdir(subs)) == before else ["the submissions folder"]
    ok_all &= row("the file system", "nothing outside --out", ", ".join(made) or "nothing", "-", not made)
    ok_all &= row("grade-class", "exit 0", f"exit {run.returncode}", "-", run.returncode == 0)

if "alone" in parts:
    parts_label = "alone"
    os.makedirs(cwd, exist_ok=True)
    for s in json.load(open(f"{cls}/roster.json"))["students"]:
        if "file" not in s:
            continue
        path = os.fsdecode(bytes.fromhex(s["file_hex"])) if "file_hex" in s else s["file"]
        card = json.load(open(f"{cls}/students/{s['id']}.json"))
        alone = tempfile.mktemp(suffix=".json")
        subprocess.run([grader, "grade", "--json", alone, "--hidden", hidden] + flags + ["--", "04", path], capture_output=True, cwd=cwd)
        mine = json.load(open(alone))
        # The outcome, not case by case: a racy kernel fails different cases in different runs.
        stage = lambda t: "cases" if t["name"].split()[0] in ["public", "probe", "hidden"] else t["name"]
        failed = lambda c: [stage(t) for t in c["tests"] if t["max_score"] > 0 and t["score"] == 0][:1]
        verdict = lambda c: (failed(c), c["score"] >= 99.5, c["score"] >= 70)
        ok_all &= row(s["name"], f"{card['score']:.1f} (grade-class)", f"{mine['score']:.1f} (grade alone)", "-", verdict(card) == verdict(mine))
sys.exit(0 if ok_all else 1)
PY
fi
cd /; rm -rf "$fresh"
echo
cat "$table"
echo
echo "$(grep -c '| yes |$' "$table") rows as expected, $(grep -c '| NO |$' "$table") not"
exit "$status"
