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
#
# The same commands with smaller settings (tests/test_gpu_main_job.py runs every row so on
# a CPU, so a row the product refuses fails CI, not a rented GPU hour): LAYERS (the rows'
# --n-gpu-layers, default all), WORKERS (-n, default 8), ROW_ARGS (more pytest options,
# e.g. --limit 1), ITEMS and AGREE_ITEMS (gpu_throughput.py's --items, 100 and 200),
# THREADS (16), HF_DEVICE (cuda), HF_SKIP (more rows for the hf row to skip, e.g.
# lm-eval), ONLY (the rows to run, default all) and each row's budget (MAIN_S ...).
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
  case " ${ONLY:-main serve hf agree-gpu agree-cpu} " in
    *" $name "*) ;;
    *) return ;;
  esac
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

LAYERS=${LAYERS:-all}
WORKERS=${WORKERS:-8}
THREADS=${THREADS:-16}
# shellcheck disable=SC2206
EXTRA=(${ROW_ARGS:-})
row main "${MAIN_S:-170}" "$PY" -m pytest suites/ -n "$WORKERS" --n-gpu-layers "$LAYERS" \
  -p no:cacheprovider --no-step-summary --progress 30 --report-json "$OUT/main.json" "${EXTRA[@]}"
row serve "${SERVE_S:-130}" "$PY" -m pytest suites/ -n "$WORKERS" --serve --n-gpu-layers "$LAYERS" \
  -p no:cacheprovider --no-step-summary --progress 30 --report-json "$OUT/serve.json" "${EXTRA[@]}"
row hf "${HF_S:-90}" "$PY" -u benchmarks/gpu_throughput.py --items "${ITEMS:-100}" \
  --device "${HF_DEVICE:-cuda}" --threads "$THREADS" --hf-modes auto,reuse \
  --skip "llama${HF_SKIP:+,$HF_SKIP}" --log "$OUT/hf.jsonl"
row agree-gpu "${AGREE_GPU_S:-30}" "$PY" -u benchmarks/gpu_throughput.py --items "${AGREE_ITEMS:-200}" \
  --threads "$THREADS" --skip hf,lm-eval,llama-cpu --log "$OUT/agree.jsonl"
CUDA_VISIBLE_DEVICES="" row agree-cpu "${AGREE_CPU_S:-60}" "$PY" -u benchmarks/gpu_throughput.py \
  --items "${AGREE_ITEMS:-200}" --threads "$THREADS" --skip hf,lm-eval,llama-gpu --log "$OUT/agree.jsonl"
"$PY" benchmarks/gpu_main_job_report.py "$LOG" "$OUT"
