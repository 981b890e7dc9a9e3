# Sourced by .ci/run and scripts/test: `phase NAME` ends the phase before it and starts NAME;
# each phase ends with one line naming it and its seconds, and the script's exit with the total,
# so that every run says where its time went.
#
#   source scripts/phases.sh ".ci/run"   # the prefix of the lines; installs the EXIT trap
#   phase "clippy"
#   cargo clippy ...

PHASES_OF=$1
PHASE=""
PHASE_STARTED=$SECONDS
PHASES_STARTED=$SECONDS

phase_end() {
  if [[ -n $PHASE ]]; then
    printf '[%s] phase %-34s %5d s\n' "$PHASES_OF" "$PHASE" $((SECONDS - PHASE_STARTED)) >&2
  fi
  PHASE=""
}

phase() {
  phase_end
  PHASE=$1
  PHASE_STARTED=$SECONDS
}

# The last phase's line, then the total; a failed run names the phase it failed in.
phases_exit() {
  local status=$?
  if ((status)) && [[ -n $PHASE ]]; then
    PHASE="$PHASE (failed: exit $status)"
  fi
  phase_end
  printf '[%s] phase %-34s %5d s\n' "$PHASES_OF" "total" $((SECONDS - PHASES_STARTED)) >&2
  return "$status"
}
trap phases_exit EXIT
