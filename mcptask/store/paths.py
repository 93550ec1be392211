"""Where mcptask keeps its files, and how it keeps them private. Configuration (profiles):
`$MCPTASK_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcptask`, else `~/.config/mcptask`; state
(token cache, the record of known tasks): `$MCPTASK_STATE_DIR`, else `$XDG_STATE_HOME/mcptask`,
else `~/.local/state/mcptask`. No heavy imports: shell completion reads these on every TAB.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from mcptask.errors import StateError


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The directory of mcptask's state (not created here)."""
    return _directory(environ, "MCPTASK_STATE_DIR", "XDG_STATE_HOME", Path(".local", "state"))


def tokens_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the token cache is."""
    return state_dir(environ) / "tokens.json"


def profiles_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the profiles file is."""
    configuration = _directory(environ, "MCPTASK_CONFIG_DIR", "XDG_CONFIG_HOME", Path(".config"))
    return configuration / "profiles.toml"


def profile_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The saved profile names, for shell completion: no profile model, no error whatever the
    file holds."""
    import tomllib

    try:
        document = tomllib.loads(profiles_path(environ).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    profiles = document.get("profiles")
    return sorted(profiles) if isinstance(profiles, dict) else []


def _directory(environ: Mapping[str, str] | None, override: str, xdg: str, fallback: Path) -> Path:
    env = os.environ if environ is None else environ
    if env.get(override):
        return Path(env[override]).expanduser()
    # XDG: a relative path in the variable is invalid and must be ignored.
    base = env.get(xdg, "")
    if base and Path(base).is_absolute():
        return Path(base) / "mcptask"
    return Path(env.get("HOME") or Path.home()) / fallback / "mcptask"


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and its parents) if missing, mode 0700 (an existing one keeps its mode).
    As ssh's StrictModes, StateError for a directory (or a link's target) that is another
    user's or that others may write: they could plant links that redirect the writes."""
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)  # or another process made it
        path.chmod(0o700)  # mkdir's mode is filtered by the umask: say it once more, exactly
    refuse_unless_own(path, path.stat())


def refuse_unless_own(path: Path, status: os.stat_result) -> None:
    """StateError, naming `path`, unless `status` (its lstat; stat for a directory) shows what
    only the user can change: a regular file or directory of the user's (or root's), and a
    directory not writable by others."""
    if stat.S_ISLNK(status.st_mode):
        raise StateError(f"{path} is a symbolic link, which mcptask does not follow: rm {path}")
    is_dir = stat.S_ISDIR(status.st_mode)
    if not (is_dir or stat.S_ISREG(status.st_mode)):
        raise StateError(f"{path} is not a regular file: rm {path}")
    # a directory named by a link: the directory is what counts
    name = f"{path} (a link to {os.path.realpath(path)})" if path.is_symlink() else str(path)
    if status.st_uid not in (os.geteuid(), 0):
        raise StateError(
            f"{name} belongs to another user (uid {status.st_uid}), who could redirect "
            f"mcptask's files: " + ("use a directory of your own" if is_dir else f"rm {path}")
        )
    mode = stat.S_IMODE(status.st_mode)
    if is_dir and mode & 0o022:
        raise StateError(
            f"{name} is writable by other users (mode {mode:04o}), who could redirect "
            f"mcptask's files: chmod go-w {path}"
        )


def open_no_follow(path: Path, flags: int) -> int:
    """`os.open(path, flags)`, new files 0600, refusing a symbolic link (StateError)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, 0o600)
    except OSError:
        if path.is_symlink():
            refuse_unless_own(path, path.lstat())
        raise


def write_private(path: Path, data: bytes) -> None:
    """Replace the file `path` with `data`, mode 0600, atomically: a temporary file beside it,
    flushed to disk, renamed over it."""
    import tempfile  # here: a TAB reads paths too, and tempfile imports shutil, bz2, lzma

    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            os.fchmod(stream.fileno(), 0o600)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold the lock file `.NAME.lock` beside `path` for the block: one process at a time
    reads, changes and writes `path`. A lock file that is a symbolic link is refused; the
    system's errors, in the block too (a full disk), are StateErrors that name `path`."""
    try:
        ensure_private_dir(path.parent)
        descriptor = open_no_follow(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)
    except OSError as exc:
        raise StateError(f"cannot write {path}: {exc}") from None
