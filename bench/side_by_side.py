"""Turns bench/compare.sh's last line (B/A with agentwire as B) into how many times agentwire's
CPU per request the other server needs: `B/A = 0.480 (rounds: 0.476, 0.488)` -> `2.08 × (...)`."""

import re
import sys

match = re.fullmatch(r"B/A = ([\d.]+) \(rounds: (.*)\)", sys.argv[1].strip())
if not match:
    sys.exit(f"not a bench/compare.sh result: {sys.argv[1]!r}")
ratio, rounds = match.groups()
each = ", ".join(f"{1 / float(r):.2f}" for r in rounds.split(", "))
print(f"{1 / float(ratio):.2f} × (rounds {each})")
