"""Where the instructions go, by line of the engine's own source, with inlined
library code charged to the engine line that called it (callgrind alone charges
an inlined `VecDeque::pop_front` to the std file, which says little).

    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \\
        --callgrind-out-file=/tmp/cg.out target/release/examples/run_scenario sc.json
    python3 bench/profile_lines.py /tmp/cg.out target/release/examples/run_scenario [N]

Prints the top N (default 40) engine source lines and the top functions (the
innermost engine function each instruction was inlined into), by self cost.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys


def self_costs(path: str) -> dict[int, int]:
    """Instruction address → self cost (Ir) from a callgrind file written with
    --dump-instr=yes --compress-pos=no."""
    cost: dict[int, int] = collections.Counter()
    skip_next = False
    with open(path) as fh:
        for line in fh:
            if line.startswith("calls="):
                skip_next = True  # the next cost line is the callee's inclusive cost
                continue
            if not line.startswith("0x"):
                continue
            if skip_next:
                skip_next = False
                continue
            parts = line.split()
            addr = int(parts[0], 16)
            # positions: instr [line]; then the Ir cost
            cost[addr] += int(parts[-1])
    return cost


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    cg, exe = argv[0], argv[1]
    top = int(argv[2]) if len(argv) > 2 else 40
    cost = self_costs(cg)
    total = sum(cost.values())
    addrs = sorted(cost)
    # Ask addr2line for the inline chain of every address (innermost first).
    out = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", exe],
                         input="\n".join(f"{a:#x}" for a in addrs), capture_output=True,
                         text=True, check=True).stdout
    by_line: dict[str, int] = collections.Counter()
    by_fn: dict[str, int] = collections.Counter()
    chunks = re.split(r"^(0x[0-9a-f]+)\n", out, flags=re.M)
    for i in range(1, len(chunks), 2):
        addr = int(chunks[i], 16)
        lines = chunks[i + 1].strip().split("\n")
        frames = list(zip(lines[0::2], lines[1::2]))  # (function, file:line), innermost first
        c = cost.get(addr, 0)
        where = next(((f, loc) for f, loc in frames if "crates/" in loc), None)
        if where is None:
            where = frames[0] if frames else ("??", "??")
        fn, loc = where
        loc = re.sub(r".*?(crates/)", r"\1", loc).split(" ")[0]
        by_line[f"{loc}  ({fn.split('::')[-1][:40]})"] += c
        by_fn[re.sub(r"::\{closure.*", "", fn)] += c
    print(f"total {total:,} Ir (self cost in the profiled binary and its libraries)")
    print("\n-- by engine source line (inlined callees charged to the line that called them)")
    for k, c in by_line.most_common(top):
        print(f"{c / total * 100:5.1f}%  {k}")
    print("\n-- by innermost engine function")
    for k, c in by_fn.most_common(max(25, top)):
        print(f"{c / total * 100:5.1f}%  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
