#!/usr/bin/env bash
# The main job on one GPU, every row of docs/backends.md's "The main job on one GPU" table,
# in at most about 8 minutes (the budgets below add up to 480 s), for a short lease on a
# machine set up by `extractbench bundle install` (or ci/gpu-setup.sh):
#
#   main     pytest suites/ -n 8, every layer offloaded, in process (eight model copies)
#   serve    pytest suites/ -n 8 --serve, the CUDA llama-server with parallel slots
#   hf       benchmarks/gpu_throughput.py: --backend hf's batch auto and prefix reuse on the
#            GPU (float32 for the GGUF) beside lm-evaluation-harness's hf batch_size=auto
#   agree-*  benchmarks/gpu_throughput.py on 200 FDA items: llama.cpp with every layer on
#            the GPU, and the same build with no GPU visible (CUDA_VISIBLE_DEVICES=): CPU
#
# Each row runs under `timeout -s INT` (pytest then writes its record as interrupted) and,
# when it ends, appends one JSON line to $LOG: the row, its command, exit status, wall
# seconds, whether it was cut, the largest GPU memory used (nvidia-smi, sampled every
# 0.5 s) and where its record and output are; gpu_throughput.py appends each group to
# its own log as it goes. A cut run keeps what it measured; run again, a row already in
# $LOG is skipped. `benchmarks/gpu_main_job.sh --report` prints the table from the logs.
#
#   OUT=reports/gpu LOG=reports/gpu/main-job.jsonl bash benchmarks/gpu_main_job.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-reports/gpu}
LOG=${LOG:-$OUT/main-job.jsonl}
PY=${PYTHON:-python}
mkdir -p "$OUT"

if [ "${1:-}" = "--report" ]; then
  exec "$PY" benchmarks/gpu_main_job_report.py "$LOG" "$OUT"
fi

row() {  # row NAME BUDGET_S COMMAND...
  local name=$1 budget=$2
  shift 2
  if grep -q "\"row\": \"$name\"" "$LOG" 2>/dev/null; then
    echo "gpu_main_job: $name already in $LOG, skipped"
    return
  fi
  echo "gpu_main_job: $name (at most $budget s): $*"
  local mem="$OUT/$name.mem"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 > "$mem" 2>/dev/null &
  local sampler=$!
  local start rc end
  start=$(date +%s.%N)
  timeout -s INT -k 20 "$budget" "$@" > "$OUT/$name.out" 2>&1
  rc=$?
  end=$(date +%s.%N)
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  "$PY" - "$LOG" "$name" "$rc" "$start" "$end" "$budget" "$mem" "$OUT/$name.out" "$*" <<'PY'
import json, sys
log, name, rc, start, end, budget, mem, out, command = sys.argv[1:]
used = [int(x) for x in open(mem).read().split() if x.strip().isdigit()]
row = {"row": name, "command": command, "rc": int(rc), "wall_s": round(float(end) - float(start), 1),
       "budget_s": int(budget), "cut": int(rc) in (124, 137) or float(end) - float(start) >= int(budget),
       "gpu_memory_max_mib": max(used) if used else None, "output": out}
with open(log, "a") as fh:
    fh.write(json.dumps(row) + "\n")
print(f"gpu_main_job: {name}: exit {rc}, {row['wall_s']} s, GPU memory max {row['gpu_memory_max_mib']} MiB")
PY
}

"$PY" -m extractbench.plugins.cli.main doctor > "$OUT/doctor.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
git rev-parse HEAD > "$OUT/commit.txt" 2>/dev/null || true

row main "${MAIN_S:-170}" "$PY" -m pytest suites/ -n 8 --n-gpu-layers all -p no:cacheprovider \
  --no-step-summary --progress 30 --report-json "$OUT/main.json"
row serve "${SERVE_S:-130}" "$PY" -m pytest suites/ -n 8 --serve --n-gpu-layers all \
  -p no:cacheprovider --no-step-summary --progress 30 --report-json "$OUT/serve.json"
row hf "${HF_S:-90}" "$PY" -u benchmarks/gpu_throughput.py --items 100 --device cuda \
  --threads 16 --hf-modes auto,reuse --skip llama --log "$OUT/hf.jsonl"
row agree-gpu "${AGREE_GPU_S:-30}" "$PY" -u benchmarks/gpu_throughput.py --items 200 \
  --threads 16 --skip hf,lm-eval,llama-cpu --log "$OUT/agree.jsonl"
CUDA_VISIBLE_DEVICES="" row agree-cpu "${AGREE_CPU_S:-60}" "$PY" -u benchmarks/gpu_throughput.py \
  --items 200 --threads 16 --skip hf,lm-eval,llama-gpu --log "$OUT/agree.jsonl"
"$PY" benchmarks/gpu_main_job_report.py "$LOG" "$OUT"
