set -u
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"; tar xzf "$R/.gpu/bundle.tgz" -C "$A/b"
export SGEMM_CUBIN_CACHE=$A/cubins PATH=$PATH:/usr/local/cuda/bin; mkdir -p $SGEMM_CUBIN_CACHE; cd "$A"
E=$R/notes/experiments/step15-skinny; t0=$(date +%s)
timeout 150 ncu --clock-control none --set full -k regex:nvjet --launch-skip 1 --launch-count 1 -o "$OUT/cublas-1024" python3 "$E/cublas-kernels.py" /dev/null 1024x1024x1024 > "$OUT/cublas.log" 2>&1; echo "cublas rc=$? $(( $(date +%s)-t0 )) s"
timeout 120 ncu --clock-control none --set full -k regex:sgemm --launch-count 1 -o "$OUT/rung-1024" b/bin/step15-skinny --precision fp16-c16 --shape 1024 --verify-only > "$OUT/rung.log" 2>&1; echo "rung rc=$? $(( $(date +%s)-t0 )) s"
for f in cublas-1024 rung-1024; do ncu --import "$OUT/$f.ncu-rep" --page details --csv > "$OUT/$f-details.csv" 2>/dev/null; done
python3 - "$OUT" <<'PY'
import csv, sys
want = ["Duration", "Elapsed Cycles", "SM Frequency", "Compute (SM) Throughput", "Memory Throughput", "L2 Cache Throughput", "L1/TEX Cache Throughput", "DRAM Throughput", "Max Bandwidth", "L2 Hit Rate", "Mem Busy", "Mem Pipes Busy", "Issue Slots Busy", "Executed Ipc Active", "Warp Cycles Per Issued Instruction", "Achieved Occupancy", "Registers Per Thread", "Grid Size", "Block Size"]
vals = {}
for who in ("cublas-1024", "rung-1024"):
    for r in csv.DictReader(open(f"{sys.argv[1]}/{who}-details.csv")):
        if r["Metric Name"] in want: vals.setdefault(r["Metric Name"], {})[who] = f'{r["Metric Value"]} {r["Metric Unit"]}'
print("| metric | cuBLAS | the rung |"); print("|---|---|---|")
for m in want:
    if m in vals: print(f"| {m} | {vals[m].get('cublas-1024','-')} | {vals[m].get('rung-1024','-')} |")
PY
