#!/usr/bin/env bash
# Grades a class on a Slurm cluster: an array job with one task per submission, each on one GPU
# (--gres=gpu:1), then a job that builds the roll-up once they have all ended.
#
#   slurm/submit.sh SUBMISSIONS OUT [sbatch options, e.g. --partition=gpu]
#
# SUBMISSIONS and OUT must be on storage every node sees. CHAPTERS (e.g. "03_reduction") limits the
# chapters graded; GRADE_CLASS_OPTIONS adds options of grader/grade_class.py to every task (e.g.
# --time-limit 900). Submitting again grades only what is not finished.
set -euo pipefail
if [ $# -lt 2 ]; then sed -n '2,9p' "$0"; exit 2; fi
COURSE=$(cd "$(dirname "$0")/.." && pwd)
SUBMISSIONS=$(realpath "$1")
OUT=$(realpath -m "$2")
shift 2
N=$(python3 "$COURSE/grader/grade_class.py" "$SUBMISSIONS" --count)
if [ "$N" -eq 0 ]; then echo "no submissions in $SUBMISSIONS"; exit 1; fi
mkdir -p "$OUT/slurm"
export COURSE SUBMISSIONS OUT CHAPTERS="${CHAPTERS:-}" GRADE_CLASS_OPTIONS="${GRADE_CLASS_OPTIONS:-}"
ARRAY=$(sbatch --parsable --array="0-$((N - 1))" --output="$OUT/slurm/grade-%A_%a.out" "$@" \
        "$COURSE/slurm/grade_array.sbatch")
ROLLUP=$(sbatch --parsable --dependency="afterany:$ARRAY" --output="$OUT/slurm/rollup-%j.out" "$@" \
         "$COURSE/slurm/rollup.sbatch")
echo "array job $ARRAY grades $N submissions; job $ROLLUP builds the roll-up in $OUT/rollup.html"
