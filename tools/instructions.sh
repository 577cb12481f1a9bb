#!/usr/bin/env bash
# Instructions per step of one benchmark case, counted by valgrind's callgrind: a measure of the
# step's work that does not move with the machine's load (the same binary gives the same count,
# run after run), for comparing two builds of the engine where timings on a shared machine
# spread by tens of percent. It counts work, not time: a change that only saves memory traffic
# or waiting shows in `stage_times`, not here.
#
# usage: tools/instructions.sh [SCENE] [--hz HZ] [--top N] [--engine shatter|rapier]
#   SCENE     a case of the peer benchmarks (default pyramid_20; `cargo run --release -p
#             shatter-peers --example stage_times -- --help` lists them)
#   --hz      one of the scene's step rates (default its first)
#   --top     also list the N functions with the most instructions of their own (default 0)
#   --engine  whose step to count (default shatter): rapier counts rapier3d's step in the same
#             case as the peer table builds it, so the two counts give the ratio of the work
#             the engines do for one step, free of the machine's load
#
# Runs `stage_times` on one thread for one run of the case and counts only inside the world's
# step (`--toggle-collect`; rapier3d's `PhysicsPipeline::step`), so building the scene is left
# out. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

scene="pyramid_20"
hz=()
top=0
engine="shatter"
while [ $# -gt 0 ]; do
    case "$1" in
        --hz) hz=(--hz "$2"); shift 2 ;;
        --top) top="$2"; shift 2 ;;
        --engine) engine="$2"; shift 2 ;;
        -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
        *) scene="$1"; shift ;;
    esac
done
case "$engine" in
    shatter) collect='*World*step*' ;;
    rapier) collect='*PhysicsPipeline*step*' ;;
    *) echo "--engine $engine: expected shatter or rapier" >&2; exit 2 ;;
esac
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind is not installed" >&2
    exit 1
fi

cargo build --quiet --release -p shatter-peers --example stage_times
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
report="$(valgrind --tool=callgrind --log-file=/dev/null --callgrind-out-file="$out" \
    --toggle-collect="$collect" \
    target/release/examples/stage_times --scene "$scene" "${hz[@]}" --threads 1 --runs 1 --engine "$engine")"
steps="$(printf '%s\n' "$report" | sed -n 's/.* 1 runs of \([0-9]*\) steps.*/\1/p')"
rate="$(printf '%s\n' "$report" | sed -n 's/^[^ ]* at \(1\/[0-9]*\) s,.*/\1/p')"
total="$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)"
if [ -z "$steps" ] || [ -z "$total" ]; then
    echo "could not read the step count or the instruction total" >&2
    exit 1
fi
echo "$scene at $rate s ($engine): $((total / steps)) instructions per step ($total over $steps steps, one thread)"
if [ "$top" -gt 0 ]; then
    callgrind_annotate "$out" 2>/dev/null |
        sed -n '/^Ir  *file:function/,$p' | sed -n "3,$((top + 2))p" | cut -c1-160
fi
