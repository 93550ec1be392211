"""Where mcptask keeps its files: the XDG base directories, each with an override.

- configuration (profiles): `$MCPTASK_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcptask`, else
  `~/.config/mcptask`
- state (token cache, the record of known tasks): `$MCPTASK_STATE_DIR`, else
  `$XDG_STATE_HOME/mcptask`, else `~/.local/state/mcptask`

Kept free of heavy imports: shell completion reads these files on every TAB.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_CONFIG_DIR = "MCPTASK_CONFIG_DIR"
ENV_STATE_DIR = "MCPTASK_STATE_DIR"


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The directory of mcptask's configuration."""
    return _directory(environ, ENV_CONFIG_DIR, "XDG_CONFIG_HOME", Path(".config"))


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The directory of mcptask's state."""
    return _directory(environ, ENV_STATE_DIR, "XDG_STATE_HOME", Path(".local", "state"))


def _directory(environ: Mapping[str, str] | None, override: str, xdg: str, fallback: Path) -> Path:
    env = os.environ if environ is None else environ
    if env.get(override):
        return Path(env[override]).expanduser()
    # XDG: a relative path in the variable is invalid and must be ignored.
    base = env.get(xdg, "")
    if base and Path(base).is_absolute():
        return Path(base) / "mcptask"
    return Path.home() / fallback / "mcptask"


def private_directory(path: Path) -> Path:
    """Create `path` (mode 0700) if it does not exist; return it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path
