# Sourced by .ci/run and scripts/test: `phase NAME` ends the phase before it and starts NAME;
# each phase ends with one line naming it and its seconds, and the script's exit with the total.
# The outermost script also ends with one line summing up every phase of the run, its own and
# those of the scripts it called, so that a run's log says in one place where its time went.
#
#   source scripts/phases.sh ".ci/run"   # the prefix of the lines; installs the EXIT trap
#   phase "clippy"
#   cargo clippy ...
#   phase_record "fuzz (beside scripts/test)" 312   # a phase that ran beside the others
#   beside "fuzz" "fuzz/run.sh --ci"; ...; beside_wait "fuzz" "scripts/test"   # (see beside)

PHASES_OF=$1
PHASE=""
PHASE_STARTED=$SECONDS
PHASES_STARTED=$SECONDS
# Every phase of the run, "script: phase seconds" per line, in a file the scripts it calls append
# to; the script that made the file prints the summary.
if [[ -z ${PHASES_FILE:-} ]]; then
  PHASES_FILE=$(mktemp)
  PHASES_OWNER=1
  export PHASES_FILE
else
  PHASES_OWNER=0
fi

# One phase's line, and its entry in the run's summary.
phase_record() { # name seconds
  printf '[%s] phase %-34s %5d s\n' "$PHASES_OF" "$1" "$2" >&2
  printf '%s\t%s\t%d\n' "$PHASES_OF" "$1" "$2" >>"$PHASES_FILE"
}

phase_end() {
  if [[ -n $PHASE ]]; then
    phase_record "$PHASE" $((SECONDS - PHASE_STARTED))
  fi
  PHASE=""
}

phase() {
  phase_end
  PHASE=$1
  PHASE_STARTED=$SECONDS
}

# One line: every phase that took a second or more, then the total, e.g.
# `[.ci/run] phases: clippy 208 · doc 38 · scripts/test: cargo test 363 · … · total 1993 s`.
# A script's phase that only wraps another script's phases (.ci/run's "scripts/test") is left out.
phases_summary() {
  local total=$1
  awk -F '\t' -v of="$PHASES_OF" -v total="$total" '
    { script[NR] = $1; name[NR] = $2; secs[NR] = $3; scripts[$1] = 1 }
    END {
      line = ""
      for (i = 1; i <= NR; i++) {
        if (secs[i] < 1 || (script[i] == of && name[i] in scripts)) continue
        label = (script[i] == of ? "" : script[i] ": ") name[i]
        line = line label " " secs[i] " · "
      }
      printf "[%s] phases: %stotal %d s\n", of, line, total
    }' "$PHASES_FILE" >&2
}

# A job run beside the phases (a build or fuzzing that takes the CPU the tests leave idle):
# `beside NAME COMMAND` starts COMMAND (a bash command line) at the lowest priority, in a process
# group of its own so that an early exit stops it and everything it started; `beside_wait NAME
# WHAT` waits for it, prints its output, records its seconds as the phase "NAME (beside WHAT)"
# and returns its exit status. It stays in this session (no setsid): with the kernel's autogroups
# a session shares the CPU equally with the others whatever its priority.
declare -A BESIDE_PID=() BESIDE_LOG=() BESIDE_STARTED=()

beside() { # name command
  local log
  log=$(mktemp)
  BESIDE_LOG[$1]=$log
  BESIDE_STARTED[$1]=$(date +%s)
  set -m
  nice -n 19 bash -c 'status=0; eval "$1" || status=$?; date +%s >"$0.ended"; exit $status' "$log" "$2" \
    </dev/null >"$log" 2>&1 &
  set +m
  BESIDE_PID[$1]=$!
}

beside_wait() { # name what-it-ran-beside
  local status=0 log=${BESIDE_LOG[$1]}
  wait "${BESIDE_PID[$1]}" || status=$?
  unset "BESIDE_PID[$1]"
  cat "$log" >&2
  phase_record "$1 (beside $2)" $(($(cat "$log.ended" 2>/dev/null || date +%s) - BESIDE_STARTED[$1]))
  rm -f "$log" "$log.ended"
  if ((status)); then
    echo "[$PHASES_OF] $1 failed (exit $status); its output is above" >&2
  fi
  return "$status"
}

# Stops what still runs beside the phases (a run that failed before waiting for it).
beside_stop() {
  local name
  for name in "${!BESIDE_PID[@]}"; do
    kill -- -"${BESIDE_PID[$name]}" 2>/dev/null || true
    rm -f "${BESIDE_LOG[$name]}" "${BESIDE_LOG[$name]}.ended"
  done
  BESIDE_PID=()
}

# The last phase's line, then the total; a failed run names the phase it failed in. An EXIT
# trap of its own that cleans up first passes the exit status it saw (`phases_exit "$status"`).
phases_exit() {
  local status=$? total
  status=${1:-$status}
  beside_stop
  if ((status)) && [[ -n $PHASE ]]; then
    PHASE="$PHASE (failed: exit $status)"
  fi
  phase_end
  total=$((SECONDS - PHASES_STARTED))
  printf '[%s] phase %-34s %5d s\n' "$PHASES_OF" "total" "$total" >&2
  if ((PHASES_OWNER)); then
    phases_summary "$total"
    rm -f "$PHASES_FILE"
  fi
  return "$status"
}
trap phases_exit EXIT
