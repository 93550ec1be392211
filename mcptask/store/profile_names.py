"""Where the profiles file is, and the names it holds: what a TAB needs, read with tomllib
and nothing more (none of the profile model or its writer), so that completing a profile
name stays instant. The profiles themselves: `mcptask.store.profiles`."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from mcptask.store.paths import config_dir

FILE_NAME = "profiles.toml"


def profiles_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the profiles file is."""
    return config_dir(environ) / FILE_NAME


def profile_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The saved profile names, for shell completion: no error, whatever the file holds."""
    try:
        document = tomllib.loads(profiles_path(environ).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    profiles = document.get("profiles")
    return sorted(profiles) if isinstance(profiles, dict) else []
