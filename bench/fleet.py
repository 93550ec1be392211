"""Many servers in one run (docs/fleet.md): `cancel --all-working` and `list` across 20
reference servers at once against the same command on one of them alone.

Each server is seeded with `--tasks` working tasks and answers every tasks/* request
`--latency` ms late (a far server). A cancel consumes its tasks, so each cancel round gets
fresh servers (started in parallel, not timed); only the mcptask process is timed. The cancel
confirms each task (the default, not `--no-wait`); every report is checked: each server
`ok`, each task once, all `cancelled`. Targets (issue 23): across 20 servers, at most 1.5x
the time of the one server alone (all the servers are alike, so one alone is the slowest
alone), for both commands.

    python bench/fleet.py [--servers 20] [--tasks 50] [--latency 20] [--rounds 3] [--parallel 20]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import alternate, as_installed, bench_environment, median  # noqa: E402
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

TARGET = 1.5


class BenchError(Exception):
    """A run did not do what it should (its figures would be meaningless)."""


@contextmanager
def servers(count: int, tasks: int, latency: int) -> Iterator[Path]:
    """`count` fresh reference servers, saved as profiles fleet-00...: the config directory."""
    options = ("--seed", f"working={tasks}", "--protocol-eras", "legacy", "--latency", str(latency))
    with ThreadPoolExecutor(max_workers=8) as pool:
        started = list(pool.map(lambda _: start_reference_server(*options), range(count)))
    try:
        with tempfile.TemporaryDirectory(prefix="mcptask-bench-fleet-") as config:
            text = "".join(
                f'[profiles.fleet-{n:02d}]\nurl = "{url}"\n' for n, (url, _) in enumerate(started)
            )
            (Path(config) / "profiles.toml").write_text(text, encoding="utf-8")
            yield Path(config)
    finally:
        for _, process in started:
            stop_process(process)


CPU: dict[str, list[float]] = {}
"""The mcptask process's CPU seconds (user + system) of each run, by its first argument and
whether it ran on one server."""


def timed(config: Path, *args: str) -> tuple[float, dict[str, object]]:
    """Run `mcptask ARGS -o json` with these profiles: its wall time and its document."""
    env = {**bench_environment(), "MCPTASK_CONFIG_DIR": str(config)}
    argv = [*mcptask_argv(), *args, "-o", "json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    CPU.setdefault(f"{args[0]} {'fleet-00' in args}", []).append(cpu)
    if done.returncode != 0:
        raise BenchError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}")
    document: dict[str, object] = json.loads(done.stdout)
    return elapsed, document


def checked_cancel(document: dict[str, object], servers_count: int, tasks: int) -> None:
    sections = document.get("servers") or [{"outcome": "ok", "report": document}]
    assert isinstance(sections, list)
    if len(sections) != servers_count or {s["outcome"] for s in sections} != {"ok"}:
        raise BenchError(f"expected {servers_count} servers, all ok: {str(sections)[:400]}")
    for section in sections:
        results = section["report"]["results"]
        if len({r["taskId"] for r in results}) != tasks or {r["outcome"] for r in results} != {
            "cancelled"
        }:
            raise BenchError(f"{section.get('server')}: not {tasks} tasks all cancelled")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--latency", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=20)
    args = parser.parse_args()
    as_installed()
    many = ["-P", "fleet-*", "--parallel", str(args.parallel)]

    def cancel(count: int) -> Callable[[], float]:
        def run() -> float:
            with servers(count, args.tasks, args.latency) as config:
                chosen = many if count > 1 else ["-P", "fleet-00"]
                elapsed, document = timed(config, "cancel", "--all-working", "--yes", *chosen)
                checked_cancel(document, count, args.tasks)
                return elapsed

        return run

    print(
        f"fleet: {args.servers} servers x {args.tasks} working tasks, {args.latency} ms per "
        f"request, --parallel {args.parallel}; median wall time of {args.rounds} rounds"
    )
    samples = alternate({"one": cancel(1), "all": cancel(args.servers)}, args.rounds)
    report("cancel --all-working", samples, args.servers, "cancel")
    with servers(args.servers, args.tasks, args.latency) as config:

        def listing(chosen: list[str]) -> Callable[[], float]:
            return lambda: timed(config, "list", *chosen)[0]

        samples = alternate({"one": listing(["-P", "fleet-00"]), "all": listing(many)}, args.rounds)
    report("list", samples, args.servers, "list")
    return 0


def report(title: str, samples: dict[str, list[float]], count: int, command: str) -> None:
    one, every = median(samples["one"]), median(samples["all"])
    verdict = "ok" if every / one <= TARGET else "OVER"
    cpu_one, cpu_all = median(CPU[f"{command} True"]), median(CPU[f"{command} False"])
    print(
        f"  {title:<21} one server {one:6.2f} s   {count} servers {every:6.2f} s   "
        f"{every / one:5.2f}x (target <= {TARGET}x: {verdict})   "
        f"client CPU {cpu_one:5.2f} s / {cpu_all:5.2f} s"
    )


if __name__ == "__main__":
    sys.exit(main())
