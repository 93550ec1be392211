"""Start-up: `mcptask --version`, one TAB completion, `--help` (the fast path, and the app
drawing it for comparison), against the raw floor `python -c "import typer"` (what any Typer
program pays to start).

Each variant is one whole process, measured in turn for `--rounds` rounds (the machine is
noisy: only the ratios of medians within one run mean anything). The completions are the
ones the scripts in completions/ ask for: a command name, and a profile name (read from a
profiles file this script writes to a temporary config directory).

    python bench/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import alternate, as_installed, print_ratios, wall_seconds  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    as_installed()
    mcptask = mcptask_argv()
    with tempfile.TemporaryDirectory() as config:
        Path(config, "profiles.toml").write_text(
            '[profiles.alpha-prod]\nurl = "http://127.0.0.1:9/mcp"\n', encoding="utf-8"
        )
        base = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        base["MCPTASK_CONFIG_DIR"] = config

        def completing(words: str) -> dict[str, str]:
            return base | {
                "_MCPTASK_COMPLETE": "complete_bash",
                "COMP_WORDS": words,
                "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
            }

        variants = {
            'python -c "import typer" (floor)': lambda: wall_seconds(
                [sys.executable, "-c", "import typer"], env=base
            ),
            "mcptask --version": lambda: wall_seconds([*mcptask, "--version"], env=base),
            "TAB: mcptask ca<TAB>": lambda: wall_seconds(mcptask, env=completing("mcptask ca")),
            "TAB: mcptask list --profile al<TAB>": lambda: wall_seconds(
                mcptask, env=completing("mcptask list --profile al")
            ),
            "mcptask --help": lambda: wall_seconds([*mcptask, "--help"], env=base),
            "mcptask cancel --help": lambda: wall_seconds([*mcptask, "cancel", "--help"], env=base),
            "mcptask --help, drawn by the app (TERMINAL_WIDTH set)": lambda: wall_seconds(
                [*mcptask, "--help"], env=base | {"TERMINAL_WIDTH": "80"}
            ),
        }
        samples = alternate(variants, args.rounds)
    print(f"start-up, median of {args.rounds} rounds (one process each):")
    print_ratios(samples, 'python -c "import typer" (floor)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
