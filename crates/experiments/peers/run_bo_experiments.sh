#!/usr/bin/env bash
# The BO peer comparison of issue 22: BoTorch vs a loop over `trustgp suggest` vs random search,
# from the same initial points, then the summaries results/bo_quality.md and results/bo_speed.md.
#
# Needs: `pip install botorch scipy "gymnasium[box2d]"` in the Python given as $PY (default
# python3), and the release binary (`cargo build --release -p trustgp-cli`). Runs two processes at
# a time (JOBS) with one torch thread each. From the repository root:
#     PY=/path/to/python bash crates/experiments/peers/run_bo_experiments.sh [all|hartmann6|rover60|lunar12|speed|summary]
set -euo pipefail
PY=${PY:-python3}
JOBS=${JOBS:-2}
TG=${TG:-target/release/trustgp}
P=crates/experiments/peers
R=results/bo
mkdir -p "$R/logs"
what=${1:-all}

init() { # problem seed: write the shared initial design before the parallel runs read it
  "$PY" -c "import sys; sys.path.insert(0, '$P'); import bo_problems as b; \
b.init_rows(b.get_problem('$1'), 20, $2, '$R/init_$1_seed$2.csv')"
}

if [[ $what == all || $what == hartmann6 ]]; then
  for s in $(seq 0 9); do init hartmann6 "$s"; done
  seq 0 9 | xargs -P "$JOBS" -I{} "$PY" $P/botorch_bo.py --problem hartmann6 --seed {} --init 20 \
    --budget 100 --init-csv $R/init_hartmann6_seed{}.csv --out $R/botorch_hartmann6_seed{}.jsonl --threads 1
  for m in suggest random; do
    seq 0 9 | xargs -P "$JOBS" -I{} "$PY" $P/suggest_loop.py --problem hartmann6 --seed {} --init 20 \
      --budget 100 --init-csv $R/init_hartmann6_seed{}.csv --trustgp "$TG" --method $m \
      --out $R/${m}_hartmann6_seed{}.jsonl
  done
  # trustgp's own loop, `trustgp bo`, from the same initial rows.
  seq 0 9 | xargs -P "$JOBS" -I{} sh -c "$TG bo --problem hartmann6 --budget 100 \
    --init-points $R/init_hartmann6_seed{}.csv --seed {} --out $R/bo_hartmann6_seed{}.jsonl > /dev/null"
fi

if [[ $what == all || $what == rover60 ]]; then
  for s in $(seq 0 4); do init rover60 "$s"; done
  for m in suggest random; do
    seq 0 4 | xargs -P "$JOBS" -I{} "$PY" $P/suggest_loop.py --problem rover60 --seed {} --init 20 \
      --budget 100 --init-csv $R/init_rover60_seed{}.csv --trustgp "$TG" --method $m \
      --out $R/${m}_rover60_seed{}.jsonl
  done
  seq 0 4 | xargs -P "$JOBS" -I{} sh -c "$TG bo --problem rover60 --budget 100 \
    --init-points $R/init_rover60_seed{}.csv --seed {} --out $R/bo_rover60_seed{}.jsonl > /dev/null"
  seq 0 4 | xargs -P "$JOBS" -I{} "$PY" $P/botorch_bo.py --problem rover60 --seed {} --init 20 \
    --budget 100 --init-csv $R/init_rover60_seed{}.csv --out $R/botorch_rover60_seed{}.jsonl --threads 1
fi

if [[ $what == all || $what == lunar12 ]]; then
  # 50 terrains per evaluation (seeds 0-49), as the paper; the init design is evaluated once.
  seq 0 4 | xargs -P "$JOBS" -I{} sh -c "\"$PY\" $P/suggest_loop.py --problem lunar12 --lunar-seeds 50 \
    --seed {} --init 20 --budget 100 --init-csv $R/init_lunar12_seed{}.csv --trustgp $TG --method suggest \
    --out $R/suggest_lunar12_seed{}.jsonl && \"$PY\" $P/suggest_loop.py --problem lunar12 --lunar-seeds 50 \
    --seed {} --init 20 --budget 100 --init-csv $R/init_lunar12_seed{}.csv --method random \
    --out $R/random_lunar12_seed{}.jsonl"
  # BoTorch from the same initial rows (each evaluation: the same 50 terrains).
  seq 0 4 | xargs -P "$JOBS" -I{} "$PY" $P/botorch_bo.py --problem lunar12 --seed {} --init 20 \
    --budget 100 --init-csv $R/init_lunar12_seed{}.csv --out $R/botorch_lunar12_seed{}.jsonl --threads 1
fi

if [[ $what == all || $what == speed ]]; then
  "$PY" $P/botorch_speed.py "$TG" --n 100 --repeats 9 --out $R/speed.json
  "$PY" $P/botorch_speed.py "$TG" --n 100 --repeats 9 --torch-threads 1 --out $R/speed_torch1.json
fi

if [[ $what == all || $what == summary ]]; then
  "$PY" $P/bo_summary.py --dir $R --problems hartmann6,rover60,lunar12 --md results/bo_quality.md \
    --preamble $R/quality_preamble.md --speed $R/speed_torch1.json,$R/speed.json --speed-md results/bo_speed.md
fi
