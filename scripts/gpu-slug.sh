# Sourced by scripts/profile.sh and scripts/record.sh: the name of the GPU they run on
# (SGEMM_DEVICE, default 0) in `gpu`, empty where nvidia-smi names none, and the results files'
# name for it in `slug` (common::harness::names::slug: nvidia-h200 for "NVIDIA H200").
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${SGEMM_DEVICE:-0}" | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
