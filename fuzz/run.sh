#!/usr/bin/env bash
# Builds every fuzz target once (stable toolchain: no sanitizer, debug assertions and overflow
# checks on), then fuzzes each for SECONDS_PER_TARGET seconds, one at a time, from a scratch copy
# of its corpus, and prints the executions per target. Exits non-zero if any target crashed; the
# input that crashed it is kept in fuzz/artifacts/<target>/ (ignored by git).
#
#   fuzz/run.sh          # 25 s per target
#   fuzz/run.sh 600      # a longer run
#   FUZZ_TARGETS="sse rest" fuzz/run.sh 60
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-25}"
targets="${FUZZ_TARGETS:-$(cargo fuzz list)}"
# Requests and answers are small; a larger input only slows the fuzzer down.
max_len=65536

cargo fuzz build -s none --debug-assertions
bin="target/$(rustc -vV | sed -n 's/^host: //p')/release"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=()
rows=()
for target in $targets; do
  cp -r "corpus/$target" "$scratch/$target"
  mkdir -p "artifacts/$target"
  log="$scratch/$target.log"
  echo "fuzzing $target for $seconds s"
  # The fuzzer cannot see serde compare member names: the text targets are told them.
  dict=()
  [[ "$target" == protobuf ]] || dict=(-dict=a2a.dict)
  # -timeout: an input that takes 10 s is a hang, not a slow request.
  if "$bin/$target" "$scratch/$target" "${dict[@]}" -max_total_time="$seconds" -max_len="$max_len" \
      -timeout=10 -print_final_stats=1 -artifact_prefix="artifacts/$target/" >"$log" 2>&1; then
    status=ok
  else
    status=CRASH
    failed+=("$target")
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY|Test unit written to|out-of-memory|timeout' "$log" | head -20 >&2
    echo "full log of $target:" >&2
    tail -60 "$log" >&2
  fi
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)"
  rows+=("$(printf '%-10s %-6s %12s %8s  %s' "$target" "$status" "${runs:-?}" "${rss:-?}" "$cov")")
done

printf '\n%-10s %-6s %12s %8s  %s\n' target status executions rss_mb coverage
printf '%s\n' "${rows[@]}"
if ((${#failed[@]})); then
  echo "fuzz/run.sh: ${failed[*]} crashed; the inputs are in fuzz/artifacts/ (see fuzz/README.md)" >&2
  exit 1
fi
