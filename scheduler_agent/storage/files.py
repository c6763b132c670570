"""Files that hold conversations are private, and a path a person gives is used as given.

- New files (the database and, through it, its -wal and -shm files, which SQLite creates with the
  database's own mode; cassettes; dumps) are created 0600: they hold every conversation and the calendar.
  A file that already exists keeps the mode its owner gave it.
- The default data folder, when the project creates it, is 0700. A folder the person already has is
  never chmod-ed.
- For a path the person gives (`--db`, `--record`, `--dump-array-file`) no folder is made: a missing one
  is named in one line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from scheduler_agent.agent.errors import InputError

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def require_folder(path: Path, what: str) -> None:
    """Raise InputError, naming the folder, unless the folder `path` goes in exists."""
    folder = path.parent
    if not folder.exists():  # one that is a file fails on open, with its own message
        raise InputError(
            f"{what} {path}: the folder {folder} does not exist. scheduler-agent makes no folders for a path "
            "you give: create it first, or give a path in a folder that exists"
        )


def make_data_folder(folder: Path) -> None:
    """The project's own data folder: created 0700 (its parents as usual) when missing; never chmod-ed."""
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)


def create_private(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist (an existing file is left as it is)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return
    os.close(descriptor)


def open_private(path: Path, mode: str = "a") -> IO[str]:
    """Open `path` for writing ("w") or appending ("a"); a new file is created 0600."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    return os.fdopen(os.open(path, flags, PRIVATE_FILE), mode, encoding="utf-8")
