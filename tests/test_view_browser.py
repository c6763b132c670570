"""The trace viewer in a real headless browser (Debian's chromium through Selenium), checked as a person would:
the chart's bars, a request opening, a call lighting up its result, the search, the page without JavaScript,
and a script in the data that runs nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.wait import WebDriverWait

from scheduler_agent.cli import app
from scheduler_agent.lessons.catalogue import lesson_path
from scheduler_agent.testing.scripted_server import Reply, text, tool_use

pytestmark = pytest.mark.timeout(180)  # a browser that hangs fails the test instead of the run
PAYLOAD = "</script><script>alert(1)</script>"


def page_of(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "page.html"
    result = CliRunner().invoke(app, ["view", *args, "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    return out.as_uri()


def lesson_page(tmp_path: Path, name: str) -> str:
    return page_of(tmp_path, str(lesson_path(name)))


def css(driver: Any, selector: str) -> list[Any]:
    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def number(cell: str) -> int:
    digits = re.sub(r"[^\d]", "", cell)
    return int(digits) if digits else 0


def table_tokens(driver: Any) -> list[int]:
    """Input tokens per request as the table shows them: uncached + cache writes + cache reads."""
    rows = css(driver, "table.timeline tbody tr[data-request]")
    return [sum(number(cell.text) for cell in row.find_elements(By.TAG_NAME, "td")[4:7]) for row in rows]


@pytest.mark.parametrize("lesson", ["forgotten_rule", "wrong_day", "parallel_calls"])
def test_the_chart_has_one_bar_per_request_with_heights_in_token_order(
    browser: Any, tmp_path: Path, lesson: str
) -> None:
    browser.get(lesson_page(tmp_path, lesson))
    bars = css(browser, "svg.chart g.bar")
    tokens = table_tokens(browser)
    assert len(bars) == len(tokens) == len(css(browser, "details.request")) >= 2
    heights = [bar.size["height"] for bar in bars]
    assert all(height > 0 for height in heights)
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            if tokens[i] < tokens[j]:
                assert heights[i] < heights[j], (tokens, heights)


def test_clicking_a_request_expands_its_whole_array_with_the_new_entries_marked(browser: Any, tmp_path: Path) -> None:
    browser.get(lesson_page(tmp_path, "no_mornings"))
    array = browser.find_element(By.CSS_SELECTOR, "#r3 .array")
    assert not array.is_displayed()
    details = open_request(browser, 3)
    assert details.get_attribute("open") is not None
    assert array.is_displayed()
    entries = array.find_elements(By.CSS_SELECTOR, ":scope > .entry")
    assert [e.get_attribute("data-e") for e in entries] == ["0", "1", "2", "3", "4"]  # the 5 entries it sent
    assert [e.get_attribute("data-e") for e in entries if "new" in e.get_attribute("class").split()] == ["3", "4"]
    assert "Nothing before 10am" in entries[0].text
    assert entries[0].is_displayed()


def test_hovering_a_tool_use_highlights_its_result(browser: Any, tmp_path: Path) -> None:
    browser.get(lesson_page(tmp_path, "parallel_calls"))
    details = open_request(browser, 2)
    calls = details.find_elements(By.CSS_SELECTOR, ".array [data-call]")
    results = details.find_elements(By.CSS_SELECTOR, ".array [data-answers]")
    assert len(calls) == len(results) == 2  # two calls in one turn, both answered in one user turn
    ActionChains(browser).move_to_element(calls[1]).perform()
    lit = [r.get_attribute("data-answers") for r in results if "linked" in r.get_attribute("class").split()]
    assert lit == [calls[1].get_attribute("data-call")]
    assert "is_error" in results[1].text  # Sam is unknown: that result is marked as an error
    ActionChains(browser).move_to_element(results[0]).perform()  # and the other way round
    assert "linked" in calls[0].get_attribute("class").split()
    assert "linked" not in calls[1].get_attribute("class").split()


def open_request(driver: Any, number: int) -> Any:
    """Click request `number`'s summary, as a person would, and wait (5 s at most) for its array to be drawn:
    the browser fires `toggle` after the click returns."""
    details = driver.find_element(By.ID, f"r{number}")
    details.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(driver, 5).until(lambda _: details.find_element(By.CSS_SELECTOR, ".array").is_displayed())
    return details


def search(driver: Any, query: str) -> dict[int, str]:
    """Type `query` into the search box, as a person does, and read each request's mark in the table (in one
    call: 500 rows read cell by cell would be a thousand WebDriver round trips)."""
    box = driver.find_element(By.ID, "q")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)  # as a person empties the box (clear() sends no input event)
    if query:
        box.send_keys(query)
    found = driver.find_element(By.ID, "found")  # the page searches once typing pauses: wait (5 s at most)
    WebDriverWait(driver, 5).until(lambda _: found.get_attribute("data-query") == query.strip().lower())
    return {number: text for number, text in driver.execute_script(READ_MARKS)}


READ_MARKS = """return Array.from(document.querySelectorAll("table.timeline tbody tr[data-request]"), (row) =>
    [Number(row.dataset.request), row.querySelector(".found-col").innerText])"""


def test_searching_10am_marks_the_requests_where_the_rule_is_missing(browser: Any, tmp_path: Path) -> None:
    browser.get(lesson_page(tmp_path, "forgotten_rule"))
    marks = search(browser, "10am")
    assert marks == {1: "✓ present", 2: "✓ present", 3: "✗ missing", 4: "✗ missing"}
    assert browser.find_element(By.ID, "found").text == "in requests 1-2; missing from 3-4"
    assert "missing" in browser.find_element(By.ID, "r3").get_attribute("class").split()
    (tmp_path / "kept").mkdir()
    browser.get(lesson_page(tmp_path / "kept", "kept_rule"))
    assert set(search(browser, "10AM").values()) == {"✓ present"}  # the project's trim keeps turn 1
    assert search(browser, "") == {1: "", 2: "", 3: "", 4: ""}


def test_without_javascript_the_table_and_every_array_are_there(browser_without_js: Any, tmp_path: Path) -> None:
    browser = browser_without_js
    browser.get(lesson_page(tmp_path, "no_mornings"))
    assert not browser.find_element(By.ID, "search").is_displayed()  # the search needs the script: hidden
    assert len(css(browser, "table.timeline tbody tr[data-request]")) == 3
    assert len(css(browser, "svg.chart g.bar")) == 3
    details = browser.find_element(By.ID, "r2")
    details.find_element(By.TAG_NAME, "summary").click()  # <details> opens without a script
    body = details.find_element(By.CSS_SELECTOR, ".request-body")
    assert "Sent entries 0\u20132. New since the previous request: 1, 2" in body.text
    assert "Free windows of at least 30 minutes" in body.text  # its new tool result, in full
    assert [a.get_attribute("href").split("#")[1] for a in body.find_elements(By.CSS_SELECTOR, "p.sent a")][:2] == [
        "e0",
        "e2",
    ]
    assert browser.find_element(By.ID, "e0").get_attribute("textContent").count("Nothing before 10am") == 1


def test_a_script_in_a_tool_result_and_an_event_title_is_shown_as_text_and_runs_nothing(
    browser: Any, tmp_path: Path, demo_db: Path, api: Any
) -> None:
    call = tool_use(
        "toolu_x1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30, "title": PAYLOAD}
    )
    api([Reply([call], "tool_use"), Reply([text("Booked it.")])])
    ask = CliRunner().invoke(
        app, ["ask", "Book Priya Monday 2pm", "--yes", "--db", str(demo_db), "--today", "2026-08-27"]
    )
    assert ask.exit_code == 0, ask.stderr
    browser.get(page_of(tmp_path, "1", "--db", str(demo_db)))
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is the check: no alert is open
    details = open_request(browser, 2)
    result = details.find_element(By.CSS_SELECTOR, ".array [data-answers='toolu_x1']")
    assert f"Booked '{PAYLOAD}'" in result.text  # the booking result, naming the event's title, as text
    assert PAYLOAD in details.find_element(By.CSS_SELECTOR, ".array [data-call='toolu_x1']").text
    assert len(css(browser, "script")) == 1  # nothing became an element
    assert search(browser, "alert(1)") == {1: "✗ missing", 2: "✓ present"}  # and the page's own script still runs


def test_a_thousand_entry_conversation_opens_and_searches_in_the_browser(browser: Any, tmp_path: Path) -> None:
    from test_view import stored

    database = stored(tmp_path / "big.db", 1001)
    browser.get(page_of(tmp_path, "1", "--db", str(database)))
    assert len(css(browser, "svg.chart g.bar")) == len(css(browser, "details.request")) == 500
    marks = search(browser, "nothing before 10am")  # the person's first turn is in every array
    assert len(marks) == 500
    assert set(marks.values()) == {"✓ present"}
    assert set(search(browser, "w999").values()) == {"✗ missing"}  # the last result was never sent
    details = open_request(browser, 500)
    assert len(details.find_elements(By.CSS_SELECTOR, ".array > .entry")) == 999
