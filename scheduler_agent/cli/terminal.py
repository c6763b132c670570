"""What reaches a terminal: control characters made visible, colour when it is wanted, a spinner that is erased.

On a terminal the trace has colour and a spinner while the model thinks; neither when the stream is not
a terminal or `NO_COLOR` is set (`FORCE_COLOR` forces the colour, never the spinner).
"""

from __future__ import annotations

import os
import re
import threading
from typing import TextIO

# --- what reaches a terminal ----------------------------------------------------------------------

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_VISIBLE: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\n\t"},  # ␛ ␍ ␀ ...
    0x7F: "\u2421",  # ␡
    **{code: f"<U+{code:04X}>" for code in (*range(0x80, 0xA0), *_BIDI)},
}


_ANY_TO_MARK = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_VISIBLE)) + "]")


def visible(text: str) -> str:
    """`text` safe to print to a terminal: control and bidi characters shown as symbols, not obeyed.

    ESC (colours, clearing the screen, the window title), CR (overwriting a line), NUL, DEL, the C1
    controls and the bidi overrides (U+202E turns text around) become visible marks (␛, ␍, <U+202E>);
    newlines and tabs stay. Only what is shown changes: the stored list keeps the text verbatim.
    """
    return text.translate(_VISIBLE) if _ANY_TO_MARK.search(text) else text  # a search is ~10x a translate's speed


def say(text: str) -> None:
    """Print a line of text for a person (`click.echo`), its control and bidi characters made visible: what a
    person, a calendar file or the model wrote (a name, a title, a preference) cannot take over the terminal.
    `--json` and `calendar export` print with `click.echo`: exactly what is stored."""
    import click

    click.echo(visible(text))


# --- terminals ------------------------------------------------------------------------------------


def _is_terminal(out: TextIO) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def colour_for(out: TextIO) -> bool:
    """Colour when `out` is a terminal, unless NO_COLOR is set; FORCE_COLOR (not "0") forces it."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    return _is_terminal(out)


def spinner_for(out: TextIO) -> bool:
    """A spinner only where it can be erased again: a terminal, and NO_COLOR not set."""
    return not os.environ.get("NO_COLOR") and _is_terminal(out)


ANSI = {"bold": "1", "dim": "2", "red": "31", "yellow": "33", "cyan": "36"}


class Style:
    """ANSI styles, or plain text when `enabled` is false."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(ANSI[style] for style in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


class Spinner:
    """`⠋ thinking` on `out`, turning in a small thread from `start()` until `stop()`, which erases it.

    It shows its first frame only after one interval, so a fast reply never flickers."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, out: TextIO, label: str = "thinking", interval: float = 0.08) -> None:
        self.out, self.label, self.interval = out, label, interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._shown = False
        self._thread = threading.Thread(target=self._spin, name="spinner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop turning and erase the line (idempotent); nothing else writes to `out` while it turns."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join()
        if self._shown:
            self.out.write("\r\x1b[K")
            self.out.flush()

    def _spin(self) -> None:
        frame = 0
        while not self._stop.wait(self.interval):
            self.out.write(f"\r{self.FRAMES[frame % len(self.FRAMES)]} {self.label}")
            self.out.flush()
            self._shown = True
            frame += 1
