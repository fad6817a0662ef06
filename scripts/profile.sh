#!/usr/bin/env bash
# Nsight Compute counters of every step of the registry at its profile's shape (4096^3, step 15
# at its chapter's decode shape: the third column of `xtask hashes`), recorded like results: one
# launch of `sgemm` per registry entry (every precision of steps 7-15), one file per entry,
# OUT/<gpu>/<id>.csv, which `cargo xtask book` reads from results/profiles/<gpu>/ and shows as a
# table with its command.
#   scripts/profile.sh BUNDLE OUT        (BUNDLE: from `cargo xtask bundle`)
# then copy OUT/<gpu> to results/profiles/<gpu> and run `cargo xtask book`. Each file holds a
# few `# key: value` lines (GPU, date, Nsight Compute, the kernel's hash, the command), then
# what ncu printed; its errors go to OUT/<gpu>/<id>.log. PROFILE_STEPS (a regex on the id)
# narrows the entries; LIMIT (default 600 s) bounds each run.
set -u
bundle=$(cd "$1" && pwd); out=$2
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
command -v ncu >/dev/null || { echo "error: ncu (Nsight Compute) is not on the PATH" >&2; exit 1; }
. "$(dirname "$0")/gpu-slug.sh"
[ -n "$gpu" ] || { echo "error: nvidia-smi names no GPU" >&2; exit 1; }
dir=$out/$slug
mkdir -p "$dir"
version=$(ncu --version | sed -n 's/^Version \([^ ]*\).*/\1/p')
limit=${LIMIT:-600}

# The FP32 SIMT steps (1-6): time and clock, DRAM and L2 bytes, shared-memory wavefronts and bank
# conflicts (loads and stores), warps active and the FMA pipe.
simt=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
# The tensor-core steps (7-13): the same bytes and wavefronts, the tensor pipe, the warp
# instructions, and where warps wait, per issued instruction: global memory and mbarriers (long
# scoreboard), barriers, fences, shared memory, a busy math pipe, fixed latencies, sleep.
tensor=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,\
smsp__inst_executed.sum,\
smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,\
smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio

# The registry's kernel hashes, as the results files record them, from the bundle's xtask.
hashes=$("$bundle/bin/xtask" hashes) || { echo "error: $bundle/bin/xtask hashes failed" >&2; exit 1; }
failed=()
for bin in "$bundle"/bin/step[0-9][0-9]-*; do
  name=$(basename "$bin")
  # The --precision values the binary takes (none for the FP32 steps).
  precisions=$("$bin" --help | sed -n 's/.*\[possible values: \(.*\)\]/\1/p' | tr -d ',')
  for p in ${precisions:--}; do
    if [ "$p" = - ]; then id=$name; flags=(); metrics=$simt; else id=$name-$p; flags=(--precision "$p"); metrics=$tensor; fi
    [[ $id =~ ${PROFILE_STEPS:-.} ]] || continue
    file=$dir/$id.csv; log=$dir/$id.log
    # A metric this Nsight Compute does not know is dropped, and the run repeated without it.
    # The step's profile shape: the third column of `xtask hashes`.
    read -r m n k <<< "$(echo "$hashes" | awk -v id="$id" '$1 == id { split($3, d, "x"); print d[1], d[2], d[3] }')"
    dropped=""
    for attempt in 1 2; do
      args=(--clock-control none --kernel-name sgemm --launch-count 1 --csv --page raw --metrics "$metrics")
      run=("${flags[@]}" --m "${m:-4096}" --n "${n:-4096}" --k "${k:-4096}" --verify-only)
      {
        echo "# gpu: $gpu"
        echo "# date: $(date -u +%F)"
        echo "# ncu: $version"
        echo "# kernel: $(echo "$hashes" | awk -v id="$id" '$1 == id { print $2 }')"
        echo "# command: ncu ${args[*]} target/release/$name ${run[*]}"
        [ -n "$dropped" ] && echo "# dropped: $dropped"
      } > "$file"
      timeout "$limit" ncu "${args[@]}" "$bin" "${run[@]}" >> "$file" 2> "$log"; rc=$?
      [ "$rc" -eq 0 ] && break
      unknown=$(tr ',' '\n' <<< "$metrics" | while read -r m; do grep -qF "$m" "$log" && echo "$m"; done)
      [ -n "$unknown" ] || break
      dropped=$(echo $unknown | tr ' ' ',')
      metrics=$(tr ',' '\n' <<< "$metrics" | grep -vxF -f <(echo "$unknown") | paste -sd,)
    done
    if [ "$rc" -eq 0 ] && grep -q '^"ID"' "$file"; then
      echo "- $id: profiled${dropped:+, without $dropped}"
    else
      # No half-written file for the book to read.
      rm -f "$file"
      echo "- $id: FAILED (exit $rc, $log)"
      failed+=("$id")
    fi
  done
done
echo "profiles of the $gpu in $dir; copy it to results/profiles/$slug and run cargo xtask book"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
