"""``python -m tests.fidelity.replay report [--suggest] [SCENARIO...]``: replay against a fresh
test server and print each differing exchange with a short diff, grouped by the class
known_gaps.toml gives it; ``--suggest`` prints, for differing exchanges not in the file,
lines to add with a guessed class. Also lists entries of the file that now match."""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from tests.fidelity.replay.classify import suggest
from tests.fidelity.replay.gaps import gap_class, known_gaps
from tests.fidelity.replay.runs import Runs
from tests.fidelity.replay.transcripts import SCENARIOS, load


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fidelity.replay")
    parser.add_argument("command", choices=["report"])
    parser.add_argument("scenarios", nargs="*", choices=[[], *SCENARIOS], default=[])
    parser.add_argument("--suggest", action="store_true",
                        help="print known_gaps.toml lines for unlisted differences")
    parser.add_argument("--all-suggestions", action="store_true",
                        help="with --suggest, also guess a class for listed exchanges")
    parser.add_argument("--diff-lines", type=int, default=4)
    options = parser.parse_args(argv)
    gaps = known_gaps()
    groups: dict[str, list[str]] = defaultdict(list)
    suggestions, fixed, totals = [], [], [0, 0, 0]
    runs = Runs()
    try:
        for scenario in options.scenarios or SCENARIOS:
            for exchange in load(scenario):
                outcome = runs.outcome("server", scenario, exchange.seq)
                totals[0] += outcome.identical
                totals[1] += outcome.same_status
                totals[2] += 1
                reason = gaps.get(exchange.key)
                if outcome.identical:
                    if reason is not None:
                        fixed.append(f"{exchange.key} ({reason})")
                    continue
                if reason is None or options.all_suggestions:
                    suggestions.append(f'"{exchange.key}" = "{suggest(outcome)}"')
                if reason is None:
                    reason = "UNLISTED " + suggest(outcome)
                request = exchange.request
                groups[gap_class(reason)].append("\n".join(
                    [f"  {exchange.key} {request['method']} {request['path']}  [{exchange.step}]",
                     *(f"      {line[:220]}" for line in
                       outcome.differences[:options.diff_lines])]))
    finally:
        runs.close()
    for name in sorted(groups, key=lambda name: (-len(groups[name]), name)):
        print(f"== {name}: {len(groups[name])}")
        print("\n".join(groups[name]))
    if fixed:
        print(f"== listed in known_gaps.toml but now identical: {len(fixed)}")
        print("\n".join(f"  {line}" for line in fixed))
    if options.suggest and suggestions:
        print("== suggested known_gaps.toml lines")
        print("\n".join(sorted(suggestions)))
    print("\n".join(runs.summary()))
    print("classes: " + ", ".join(f"{name} {len(items)}" for name, items in
                                   sorted(groups.items(), key=lambda item: -len(item[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
