# Sourced by .ci/run and scripts/test: `phase NAME` ends the phase before it and starts NAME;
# each phase ends with one line naming it and its seconds, and the script's exit with the total.
# The outermost script also ends with one line summing up every phase of the run, its own and
# those of the scripts it called, so that a run's log says in one place where its time went.
#
#   source scripts/phases.sh ".ci/run"   # the prefix of the lines; installs the EXIT trap
#   phase "clippy"
#   cargo clippy ...
#   phase_record "fuzz (beside scripts/test)" 312   # a phase that ran beside the others

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

# The last phase's line, then the total; a failed run names the phase it failed in. An EXIT
# trap of its own that cleans up first passes the exit status it saw (`phases_exit "$status"`).
phases_exit() {
  local status=$? total
  status=${1:-$status}
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
