"""Each command's examples: shown at the end of its `--help`, and in the generated reference
and man pages (scripts/docs_reference.py), so the three cannot disagree."""

from __future__ import annotations

EXAMPLES: dict[str, tuple[str, ...]] = {
    "connect": (
        "mcptask connect http://127.0.0.1:8765/mcp",
        'mcptask connect "mcptask reference-server --stdio" -o json',
        "mcptask connect http://127.0.0.1:8765/mcp --save local --default",
    ),
    "start": (
        'mcptask start long_job seconds:=30 message="nightly build"',
        "mcptask start long_job --args @job.json -o ids",
        "mcptask start long_job seconds:=5 --watch",
        "mcptask start long_job seconds:=600 --ttl 3600",
    ),
    "list": (
        "mcptask list --status working",
        "mcptask list --status working -o ids | head",
        "mcptask list --order server -o jsonl",
        "mcptask list --known",
    ),
    "get": ("mcptask get working-001 -o json",),
    "result": (
        "mcptask result 786512e2",
        "mcptask result 786512e2 --wait-timeout 600 -o json",
    ),
    "answer": (
        "mcptask answer 786512e2",
        "mcptask answer 786512e2 answer=yes",
        "mcptask answer 786512e2 --key approval approve=true count:=3",
        "mcptask answer 786512e2 --from-file answer.json -o json",
        "mcptask answer 786512e2 --decline",
    ),
    "cancel": (
        "mcptask cancel abc123 def456",
        "mcptask cancel --all-working --yes",
        "mcptask cancel --all-working --dry-run",
        "mcptask cancel --all-working --known --yes",
        "mcptask list --status working -o ids | mcptask cancel -",
        "mcptask cancel --from-file ids.txt -o json",
    ),
    "watch": (
        "mcptask watch abc123 def456",
        "mcptask watch --known",
        "mcptask watch --status working --exit-status",
        "mcptask watch abc123 --wait-timeout 60",
        "mcptask watch abc123 --answer",
        "mcptask watch --forever -o jsonl >> tasks.log",
        "mcptask watch -P 'prod-*' --exit-status",
    ),
    "forget": (
        "mcptask forget 786512e2 --url http://127.0.0.1:8765/mcp",
        "mcptask forget --all",
    ),
    "handles": (
        "mcptask handles --profile prod > handles.json",
        "mcptask handles --profile prod --import handles.json",
        "mcptask handles --url http://127.0.0.1:8765/mcp -o jsonl",
    ),
    "profiles": (
        "mcptask profiles",
        "mcptask profiles --default staging",
        "mcptask profiles --delete old",
    ),
    "login": (
        "mcptask login https://mcp.example.com/mcp",
        "mcptask login --profile prod --no-browser",
    ),
    "logout": (
        "mcptask logout https://mcp.example.com/mcp",
        "mcptask logout --all",
    ),
    "reference-server": (
        "mcptask reference-server --http 127.0.0.1:8765 --seed working=20,completed=5",
        "mcptask reference-server --stdio --protocol-eras modern",
    ),
}
"""Examples by command name, each one command line as a user would type it."""
