"""The CLI as a person meets it: output, exit codes, one-line errors, options after the subcommand."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler_agent.cli import app
from scheduler_agent.testing.scripted_server import Reply, text, tool_use

runner = CliRunner()


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


def test_demo_replays_the_canonical_trace() -> None:
    result = invoke("demo")
    assert result.exit_code == 0, result.stderr
    assert "14:00-14:30" in result.stdout
    assert 'find_free_slots(person="priya", week="2026-08-31")' in result.stderr
    assert re.findall(r"\[iteration (\d)\] sending (\d) entr", result.stderr) == [("1", "1"), ("2", "3"), ("3", "5")]


def test_demo_dump_array_prints_exactly_the_messages_sent(tmp_path: Path) -> None:
    dump_file = tmp_path / "d.jsonl"
    result = invoke("demo", "--dump-array", "--dump-array-file", str(dump_file))
    assert result.exit_code == 0
    sent = [json.loads(line)["request"]["messages"] for line in dump_file.read_text().splitlines()]
    blocks = re.split(r"^=== iteration \d · messages: \d+ entr(?:y|ies) ===\n", result.stderr, flags=re.M)[1:]
    dumped = [json.JSONDecoder().raw_decode(block)[0] for block in blocks]
    assert dumped == sent
    assert len(sent) == 3
    assert result.stderr.count("=== system prompt") == 1  # shown once: it never changed


@pytest.mark.parametrize("config_dir", [True, False], ids=["empty-config-dir", "no-config-dir"])
def test_ask_without_credentials_is_one_line_that_mentions_demo(
    demo_db: Path, config_dir: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not config_dir:
        monkeypatch.delenv("ANTHROPIC_CONFIG_DIR")
    result = invoke("ask", "Book Priya", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 1, (result.stdout, result.stderr, result.exception)
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1
    assert "scheduler-agent demo" in error_lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_ask_books_through_the_api_with_options_after_the_subcommand(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    call = tool_use("toolu_1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    server = api([Reply([call], "tool_use"), Reply([text("Booked Monday 14:00.")])])
    result = invoke(
        "ask", "Book Priya Monday 2pm", "--yes", "--db", str(demo_db), "--today", "2026-08-27", "-m", "claude-opus-5-5"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "Booked Monday 14:00."
    assert [r["model"] for r in server.received] == ["claude-opus-5-5"] * 2
    assert "Today is Thursday 2026-08-27" in server.received[0]["system"]
    assert "Event id:" in server.received[1]["messages"][2]["content"][0]["content"]


def test_environment_variables_set_db_today_and_model(demo_db: Path, api, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    server = api([Reply([text("ok")])])
    monkeypatch.setenv("SCHEDULER_AGENT_DB", str(demo_db))
    monkeypatch.setenv("SCHEDULER_AGENT_TODAY", "2026-09-02T11:30")
    monkeypatch.setenv("SCHEDULER_AGENT_MODEL", "claude-haiku-5-5")
    assert invoke("ask", "hello").exit_code == 0
    assert server.received[0]["model"] == "claude-haiku-5-5"
    assert "Today is Wednesday 2026-09-02" in server.received[0]["system"]


def test_the_iteration_bound_exits_3_and_says_how_to_go_on(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    asks = [
        Reply([tool_use(f"toolu_{i}", "find_free_slots", {"person": "priya", "week": "2026-08-31"})], "tool_use")
        for i in range(2)
    ]
    api(asks)
    result = invoke("ask", "find", "--db", str(demo_db), "--today", "2026-08-27", "--max-iterations", "2")
    assert result.exit_code == 3
    assert "Stopped after 2 iterations" in result.stderr
    assert "--max-iterations" in result.stderr


def test_a_model_stop_exits_4(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    api([Reply([text("I was cut")], "max_tokens")])
    result = invoke("ask", "x", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 4
    assert "max_tokens" in result.stderr


def test_an_overloaded_api_exits_5_after_the_sdks_retries(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    overloaded = Reply(
        status=529, error_type="overloaded_error", error_message="Overloaded", headers={"retry-after-ms": "1"}
    )
    server = api([overloaded] * 3)
    result = invoke("ask", "x", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 5
    assert len(server.received) == 3  # one try and the SDK's two retries
    assert result.stderr.strip().splitlines()[-1].startswith("Error: The API is unavailable (529: Overloaded)")


def test_a_refused_key_is_one_line_that_mentions_demo(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    api([Reply(status=401, error_type="authentication_error", error_message="invalid x-api-key")])
    result = invoke("ask", "x", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 1
    assert "invalid x-api-key" in result.stderr
    assert "The API refused the key it was sent (401: invalid x-api-key)" in result.stderr
    assert "No Anthropic credentials" not in result.stderr  # a key was set: it was refused, not missing
    assert "scheduler-agent demo" in result.stderr


def test_a_rejected_request_exits_1_with_the_apis_message(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    api(
        [
            Reply(
                status=400,
                error_type="invalid_request_error",
                error_message="messages: text content blocks must be non-empty",
            )
        ]
    )
    result = invoke("ask", "x", "--db", str(demo_db), "--today", "2026-08-27")
    assert result.exit_code == 1
    assert "text content blocks must be non-empty" in result.stderr


def test_chat_carries_the_list_from_turn_to_turn(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    server = api([Reply([text("Hello Jordan.")]), Reply([text("You said hi before.")])])
    result = invoke("chat", "--db", str(demo_db), "--today", "2026-08-27", input="hi\nwhat did I say?\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["Hello Jordan.", "You said hi before."]
    second = server.received[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == [{"type": "text", "text": "Hello Jordan."}]


def test_usage_errors_exit_2() -> None:
    assert invoke("ask").exit_code == 2
    assert invoke("ask", "x", "--max-iterations", "0").exit_code == 2


def test_bad_today_is_one_line(demo_db: Path) -> None:
    result = invoke("ask", "x", "--db", str(demo_db), "--today", "tomorrow")
    assert result.exit_code == 1
    assert "--today 'tomorrow' is not a date" in result.stderr


def test_help_lists_the_exit_codes() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    assert "3 iteration bound reached" in result.stdout
    assert "5 the API unavailable" in result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["ask", "--help"],
        ["calendar", "people", "--db", "{db}"],
        ["conversations", "list", "--db", "{db}"],
        ["stats", "--db", "{db}"],
        ["lint", "{array}"],
    ],
)
def test_fast_paths_do_not_import_the_sdk_or_vcrpy(argv: list[str], tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text('[{"role": "user", "content": "hi"}]')
    args = [a.replace("{db}", str(tmp_path / "c.db")).replace("{array}", str(array)) for a in argv]
    code = (
        "import sys\nfrom scheduler_agent.cli import app\n"
        f"try:\n    app({args!r})\nexcept SystemExit:\n    pass\n"
        "print('LOADED', 'anthropic' in sys.modules, 'vcr' in sys.modules, "
        "[m for m in ('pydantic', 'rich', 'typer') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "LOADED False False []"  # nor pydantic, rich or Typer (issue 14)


def test_replay_runs_any_cassette_and_a_missing_one_is_one_line(tmp_path: Path) -> None:
    from scheduler_agent.lessons.authoring import cassette_path

    assert invoke("replay", str(cassette_path("no_mornings"))).exit_code == 0
    missing = invoke("replay", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 1
    assert missing.stderr.strip() == f"Error: No cassette at {tmp_path / 'nope.yaml'}"
    folder = invoke("replay", str(tmp_path))  # it was "No cassette at" too, of a folder that is there
    assert (folder.exit_code, folder.stderr.strip()) == (1, f"Error: {tmp_path} is a folder, not a cassette")
    viewed = invoke("view", str(tmp_path))
    assert viewed.exit_code == 1
    assert viewed.stderr.startswith(f"Error: {tmp_path} is a folder and not a conversation id: give an id")
    not_ours = tmp_path / "other.yaml"
    not_ours.write_text("interactions: []\n")
    result = invoke("replay", str(not_ours))
    assert result.exit_code == 1
    assert "is not a scheduler-agent cassette" in result.stderr


def test_usage_flag_prints_tokens_per_iteration_and_per_turn(demo_db: Path, api) -> None:  # type: ignore[no-untyped-def]
    find = tool_use("toolu_u1", "find_free_slots", {"person": "priya", "week": "2026-08-31"})
    api([Reply([find], "tool_use"), Reply([text("Monday 14:00.")])])
    quiet = invoke("ask", "when?", "--no-store", "--db", str(demo_db), "--today", "2026-08-27")
    assert "usage:" not in quiet.stderr
    api([Reply([find], "tool_use"), Reply([text("Monday 14:00.")])])
    result = invoke("ask", "when?", "-u", "--no-store", "--db", str(demo_db), "--today", "2026-08-27")
    per_iteration = re.findall(r"usage: ([\d,]+) input tokens, (\d+) output", result.stderr)
    assert len(per_iteration) == 2
    total = re.search(r"turn total \(2 iterations\): ([\d,]+) input tokens, (\d+) output", result.stderr)
    assert total
    assert int(total[1].replace(",", "")) == sum(int(i.replace(",", "")) for i, _ in per_iteration)
