"""Start-up: `mcptask --version`, one TAB completion and `--help` (the root's and a
command's, plain, with NO_COLOR and with COLUMNS=100), against the raw floor
`python -c "import typer"` (what any Typer program pays to start).

Each variant is one whole process, measured in turn for `--rounds` rounds (the machine is
noisy: only the ratios of medians within one run mean anything). The completions are the
ones the scripts in completions/ ask for: the command names (all, then those starting with
`ca`), a profile name (read from a profiles file this script writes to a temporary config
directory) and a task id (read from an empty record of known tasks in a temporary state
directory).

    python bench/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import alternate, as_installed, print_ratios, wall_seconds  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402

FLOOR = 'python -c "import typer" (floor)'
HELP_SETTINGS = {"": {}, ", NO_COLOR": {"NO_COLOR": "1"}, ", COLUMNS=100": {"COLUMNS": "100"}}
"""The environments help is measured in (the default, and two that change how it is drawn)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    as_installed()
    mcptask = mcptask_argv()
    with tempfile.TemporaryDirectory() as config, tempfile.TemporaryDirectory() as state:
        Path(config, "profiles.toml").write_text(
            '[profiles.alpha-prod]\nurl = "http://127.0.0.1:9/mcp"\n', encoding="utf-8"
        )
        base = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        base = {k: v for k, v in base.items() if k not in ("NO_COLOR", "COLUMNS")}
        base |= {"MCPTASK_CONFIG_DIR": config, "MCPTASK_STATE_DIR": state}

        def completing(words: str) -> dict[str, str]:
            return base | {
                "_MCPTASK_COMPLETE": "complete_bash",
                "COMP_WORDS": words,
                "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
            }

        def run(argv: list[str], env: dict[str, str]) -> Callable[[], float]:
            return lambda: wall_seconds(argv, env=env)

        variants = {
            FLOOR: run([sys.executable, "-c", "import typer"], base),
            "mcptask --version": run([*mcptask, "--version"], base),
            "TAB: mcptask <TAB> (command names)": run(mcptask, completing("mcptask ")),
            "TAB: mcptask ca<TAB>": run(mcptask, completing("mcptask ca")),
            "TAB: mcptask list --profile al<TAB>": run(
                mcptask, completing("mcptask list --profile al")
            ),
            "TAB: mcptask cancel <TAB> (task ids)": run(mcptask, completing("mcptask cancel ")),
        }
        for suffix, settings in HELP_SETTINGS.items():
            variants[f"mcptask --help{suffix}"] = run([*mcptask, "--help"], base | settings)
            variants[f"mcptask cancel --help{suffix}"] = run(
                [*mcptask, "cancel", "--help"], base | settings
            )
        samples = alternate(variants, args.rounds)
    print(f"start-up, median of {args.rounds} rounds (one process each):")
    print_ratios(samples, FLOOR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
