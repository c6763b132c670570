"""A real headless browser for the viewer's tests: Debian's chromium driven by Selenium through Debian's
chromium-driver (matching versions; Selenium is given the driver's path, so it never downloads one).

As a script it makes the README's screenshot of the `no_mornings` page:

    .venv/bin/python tests/browser.py docs/no_mornings.png
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
START_DEADLINE = 60.0  # seconds for chromium to start and answer


class BrowserUnavailable(RuntimeError):
    """Chromium or its driver is missing, or did not start within the deadline."""


def start(*, javascript: bool = True, width: int = 1150, height: int = 1400, deadline: float = START_DEADLINE) -> Any:
    """A headless Chromium (`--headless=new --no-sandbox`: the tests run as root), or BrowserUnavailable."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            raise BrowserUnavailable(f"{path} is missing: apt-get install chromium chromium-driver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise BrowserUnavailable(f"selenium is not installed ({exc}): pip install -e '.[test]'") from None
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
        "--no-first-run",
    ):
        options.add_argument(argument)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    started: list[Any] = []
    failed: list[BaseException] = []
    # Chromium keeps its singleton socket in a folder of TMPDIR, which it never removes: give it one of its own,
    # which `stop` removes, so that a test run leaves nothing in the temp folder.
    temp = tempfile.mkdtemp(prefix="sa-chromium-")
    service = Service(executable_path=CHROMEDRIVER, env={**os.environ, "TMPDIR": temp})

    def launch() -> None:
        try:
            started.append(webdriver.Chrome(service=service, options=options))
        except BaseException as exc:  # reported to the caller below
            failed.append(exc)

    thread = threading.Thread(target=launch, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive() or failed:
        shutil.rmtree(temp, ignore_errors=True)
        raise BrowserUnavailable(
            f"chromium did not start within {deadline:.0f} s" if not failed else f"chromium did not start: {failed[0]}"
        )
    driver = started[0]
    driver.sa_temp = temp
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


def stop(driver: Any) -> None:
    """Quit the browser `start` gave, and remove its temp folder."""
    try:
        driver.quit()
    finally:
        shutil.rmtree(driver.sa_temp, ignore_errors=True)


def screenshot(out: Path) -> None:
    """The `no_mornings` page with request 2 open and "10am" searched, as a PNG."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    from scheduler_agent.lessons.catalogue import lesson_path
    from scheduler_agent.view.page import build_page
    from scheduler_agent.view.sources import from_cassette

    folder = Path(tempfile.mkdtemp())
    page = folder / "no_mornings.html"
    page.write_text(build_page(from_cassette(lesson_path("no_mornings"))), encoding="utf-8")
    driver = start(width=1100, height=1000)
    try:
        driver.get(page.as_uri())
        driver.find_element(By.CSS_SELECTOR, "#r2 > summary").click()
        driver.find_element(By.ID, "q").send_keys("10am")
        found = driver.find_element(By.ID, "found")  # the page searches once typing pauses
        WebDriverWait(driver, 5).until(lambda _: found.get_attribute("data-query") == "10am")
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1100, min(int(height) + 40, 4000))
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(out))
    finally:
        stop(driver)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/no_mornings.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    screenshot(target)
    print(target)
