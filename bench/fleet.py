"""Many servers in one run (docs/fleet.md): `cancel --all-working` and `list` across 20
reference servers at once against the same command on one of them alone.

Each server is seeded with `--tasks` working tasks and answers every tasks/* request
`--latency` ms late (a far server). A cancel consumes its tasks, so each cancel round gets
fresh servers (started in parallel, not timed); only the mcptask process is timed. The cancel
confirms each task (the default, not `--no-wait`); every report is checked: each server
`ok`, each task once, all `cancelled`. Targets (issue 23): across 20 servers, at most 1.5x
the time of the one server alone (all the servers are alike, so one alone is the slowest
alone), for both commands.

The cancel is also measured against its raw floor: httpx alone making the same requests to
the 20 servers, a thread each in one process as mcptask does (bench/raw_client.py bulk-many;
each server's cancels and gets one after the other, where mcptask overlaps them, so compare
its client CPU more than its wall time). The servers run on the same cores as the client:
their CPU seconds in each run are shown too.

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
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import (  # noqa: E402
    alternate,
    as_installed,
    bench_environment,
    cpu_seconds,
    median,
)
from tests.cli_process import mcptask_argv  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

TARGET = 1.5


class BenchError(Exception):
    """A run did not do what it should (its figures would be meaningless)."""


RAW = [sys.executable, str(REPO_ROOT / "bench" / "raw_client.py"), "bulk-many"]


@dataclass(frozen=True)
class Servers:
    """Running reference servers, saved as profiles fleet-00... in `config`."""

    urls: list[str]
    config: Path
    pids: list[int]

    def cpu(self) -> float:
        """Their CPU seconds so far (they share the cores with the client)."""
        return sum(cpu_seconds(pid) for pid in self.pids)


@contextmanager
def servers(count: int, tasks: int, latency: int) -> Iterator[Servers]:
    """`count` fresh reference servers with `tasks` working tasks each."""
    options = ("--seed", f"working={tasks}", "--protocol-eras", "legacy", "--latency", str(latency))
    with ThreadPoolExecutor(max_workers=8) as pool:
        started = list(pool.map(lambda _: start_reference_server(*options), range(count)))
    try:
        with tempfile.TemporaryDirectory(prefix="mcptask-bench-fleet-") as config:
            urls = [url for url, _ in started]
            text = "".join(
                f'[profiles.fleet-{n:02d}]\nurl = "{url}"\n' for n, url in enumerate(urls)
            )
            (Path(config) / "profiles.toml").write_text(text, encoding="utf-8")
            yield Servers(urls, Path(config), [process.pid for _, process in started])
    finally:
        for _, process in started:
            stop_process(process)


CPU: dict[str, list[float]] = {}
"""The client process's CPU seconds (user + system) of each run, by what ran: a command's
first argument and whether it ran on one server, or `raw`."""
SERVER_CPU: dict[str, list[float]] = {}
"""The servers' CPU seconds during each run, by what ran."""


def timed(fleet: Servers, *args: str) -> tuple[float, dict[str, object]]:
    """Run `mcptask ARGS -o json` with these profiles: its wall time and its document."""
    env = {**bench_environment(), "MCPTASK_CONFIG_DIR": str(fleet.config)}
    argv = [*mcptask_argv(), *args, "-o", "json"]
    elapsed, done = counted(fleet, argv, env, f"{args[0]} {'fleet-00' in args}")
    if done.returncode != 0:
        raise BenchError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}")
    document: dict[str, object] = json.loads(done.stdout)
    return elapsed, document


def counted(
    fleet: Servers, argv: list[str], env: dict[str, str], what: str
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run a client process: its wall time; its CPU and the servers' are noted under `what`."""
    servers_before = fleet.cpu()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(what, []).append(
        after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    )
    SERVER_CPU.setdefault(what, []).append(fleet.cpu() - servers_before)
    return elapsed, done


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
            with servers(count, args.tasks, args.latency) as fleet:
                chosen = many if count > 1 else ["-P", "fleet-00"]
                elapsed, document = timed(fleet, "cancel", "--all-working", "--yes", *chosen)
                checked_cancel(document, count, args.tasks)
                return elapsed

        return run

    print(
        f"fleet: {args.servers} servers x {args.tasks} working tasks, {args.latency} ms per "
        f"request, --parallel {args.parallel}; median wall time of {args.rounds} rounds"
    )

    def raw() -> float:
        with servers(args.servers, args.tasks, args.latency) as fleet:
            elapsed, done = counted(fleet, [*RAW, *fleet.urls], bench_environment(), "raw")
            if done.returncode != 0:
                raise BenchError(f"the raw client failed: {done.stderr[-400:]}")
            return elapsed

    samples = alternate({"one": cancel(1), "all": cancel(args.servers), "raw": raw}, args.rounds)
    report("cancel --all-working", samples, args.servers, "cancel")
    every, floor = median(samples["all"]), median(samples["raw"])
    cpu, raw_cpu = median(CPU["cancel False"]), median(CPU["raw"])
    print(
        f"  {'raw httpx floor':<21} {args.servers} servers {floor:6.2f} s (mcptask "
        f"{every / floor:4.2f}x raw's)   client CPU {raw_cpu:5.2f} s "
        f"(mcptask {cpu / raw_cpu:4.2f}x raw's)   servers' CPU "
        f"{median(SERVER_CPU['raw']):5.2f} s (in mcptask's run "
        f"{median(SERVER_CPU['cancel False']):5.2f} s)"
    )
    with servers(args.servers, args.tasks, args.latency) as fleet:

        def listing(chosen: list[str]) -> Callable[[], float]:
            return lambda: timed(fleet, "list", *chosen)[0]

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
