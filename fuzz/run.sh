#!/usr/bin/env bash
# Builds every fuzz target once (stable toolchain: no sanitizer, debug assertions and overflow
# checks on), then fuzzes each target, one at a time, from a scratch copy of its corpus (every
# input of which is replayed first), and prints the executions per target. Exits non-zero if any
# target crashed, printing the command that reproduces it; the input is kept in
# fuzz/artifacts/<target>/ (ignored by git).
#
#   fuzz/run.sh --ci            # what CI runs: a fixed seed and a fixed number of executions per
#                               # target, so a commit gives the same result on every machine
#   fuzz/run.sh 600             # explore: 600 s per target from a random seed (printed)
#   FUZZ_SEED=7 fuzz/run.sh 600 # explore again from a given seed
#   FUZZ_TARGETS="sse rest" fuzz/run.sh 60
set -euo pipefail
cd "$(dirname "$0")"

# Executions per target in CI: about 20 s each on a 2-core machine. Raise them when the targets
# get faster; a change here changes which inputs CI tries, so it is a change of its own.
declare -A ci_runs=([dialects]=1000000 [jsonrpc]=600000 [protobuf]=4000000 [protojson]=2500000 [rest]=800000 [sse]=110000)
ci_seed=20261128

mode=explore
seconds=25
case "${1:-}" in
  --ci) mode=ci ;;
  '') ;;
  *[!0-9]*) echo "usage: fuzz/run.sh [--ci | SECONDS]" >&2; exit 2 ;;
  *) seconds=$1 ;;
esac
if [[ $mode == ci ]]; then
  seed=$ci_seed
else
  seed="${FUZZ_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}"
fi
targets="${FUZZ_TARGETS:-$(cargo fuzz list)}"
# Requests and answers are small; a larger input only slows the fuzzer down.
max_len=65536

# In CI the build is made through a fixed path (/tmp/agentwire-fuzz-root, a link to this checkout,
# taken under a lock): cargo hashes a path dependency outside the fuzz workspace (../crates) by its
# absolute path into the crates' metadata, which moves symbols and type ids, and with them the
# values libFuzzer sees compared, so the same commit fuzzed from two clones would try different
# inputs. Through the fixed path, every clone builds the same binaries.
fuzz_dir=$PWD
if [[ $mode == ci ]]; then
  fixed=/tmp/agentwire-fuzz-root
  exec 8>"$fixed.lock"
  flock 8
  ln -sfn "$(cd .. && pwd -P)" "$fixed"
  fuzz_dir=$fixed/fuzz
fi
cargo fuzz build --fuzz-dir "$fuzz_dir" -s none --debug-assertions
[[ $mode != ci ]] || exec 8>&-
bin="target/$(rustc -vV | sed -n 's/^host: //p')/release"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# In CI a run depends on its seed alone: fixed randomness and clocks (hermetic.c), addresses
# without randomization (pointers are compared too) and in an empty environment (the caller's
# variables would move the stack, and with it those pointers), no rereading of the corpus
# directory once a second, and no timeout alarm (both act when the real clock says). An input that
# hangs is cut off from outside instead: SIGABRT makes libFuzzer save it as a crash.
hermetic=()
if [[ $mode == ci ]]; then
  cc -shared -fPIC -O2 -o "$scratch/hermetic.so" hermetic.c
  hermetic=(timeout -s ABRT 600 env -i LD_PRELOAD="$scratch/hermetic.so")
  if setarch -R true 2>/dev/null; then hermetic+=(setarch -R); fi
fi
failed=()
rows=()
for target in $targets; do
  cp -r "corpus/$target" "$scratch/$target"
  mkdir -p "artifacts/$target"
  log="$scratch/$target.log"
  if [[ $mode == ci ]]; then
    bound=(-runs="${ci_runs[$target]:?fuzz/run.sh: no CI run count for $target}" -reload=0 -timeout=0)
    rerun="FUZZ_TARGETS=$target fuzz/run.sh --ci"
    echo "fuzzing $target for ${ci_runs[$target]} executions from seed $seed"
  else
    # An input that takes 10 s is a hang, not a slow request.
    bound=(-max_total_time="$seconds" -timeout=10)
    rerun="FUZZ_SEED=$seed FUZZ_TARGETS=$target fuzz/run.sh $seconds   # the same path, if time allows"
    echo "fuzzing $target for $seconds s from seed $seed"
  fi
  # The fuzzer cannot see serde compare member names: the text targets are told them.
  dict=()
  [[ "$target" == protobuf ]] || dict=(-dict=a2a.dict)
  if "${hermetic[@]}" "$bin/$target" "$scratch/$target" "${dict[@]}" -seed="$seed" "${bound[@]}" -max_len="$max_len" \
      -print_final_stats=1 -artifact_prefix="artifacts/$target/" >"$log" 2>&1; then
    status=ok
  else
    status=CRASH
    failed+=("$target")
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY|Test unit written to|out-of-memory|timeout' "$log" | head -20 >&2
    echo "full log of $target:" >&2
    tail -60 "$log" >&2
    input="$(sed -n 's/^Test unit written to //p' "$log" | tail -1)"
    echo "reproduce the crash of $target with its input:" >&2
    echo "  cd fuzz && cargo fuzz build -s none --debug-assertions && $bin/$target ${input:-artifacts/$target/<input>}" >&2
    echo "or the whole run: $rerun" >&2
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)"
  rows+=("$(printf '%-10s %-6s %12s %8s  %s' "$target" "$status" "${runs:-?}" "${rss:-?}" "$cov")")
done

printf '\n%-10s %-6s %12s %8s  %s   (seed %s)\n' target status executions rss_mb coverage "$seed"
printf '%s\n' "${rows[@]}"
if ((${#failed[@]})); then
  echo "fuzz/run.sh: ${failed[*]} crashed; the inputs are in fuzz/artifacts/ (see fuzz/README.md)" >&2
  exit 1
fi
