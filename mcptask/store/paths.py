"""Where mcptask keeps local state: `MCPTASK_STATE_DIR`, else `$XDG_STATE_HOME/mcptask`, else
`~/.local/state/mcptask`; the directory is private to the user (mode 0700)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_STATE_DIR = "MCPTASK_STATE_DIR"


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The state directory the environment names (not created here)."""
    env = os.environ if environ is None else environ
    override = env.get(ENV_STATE_DIR)
    if override:
        return Path(override).expanduser()
    xdg = env.get("XDG_STATE_HOME")
    # The XDG specification says to ignore a relative path.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "mcptask"
    return Path(env.get("HOME") or Path.home()) / ".local" / "state" / "mcptask"


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and its parents) if missing; a directory created here is mode 0700.

    An existing directory keeps its mode when the user chose it (`MCPTASK_STATE_DIR`); the
    files in it are 0600 either way.
    """
    if path.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        if not path.is_dir():
            raise
        return  # another mcptask process made it first
    # mkdir's mode is filtered by the umask; say it once more, exactly.
    path.chmod(0o700)
