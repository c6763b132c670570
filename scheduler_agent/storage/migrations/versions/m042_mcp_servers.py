"""m042_mcp_servers: the MCP servers a conversation's turn in force used, each by name with the tools it offered
(a JSON object, `{}` for none), never the command or URL that reached it: `resume` and the workers need the
same `--mcp NAME=...` and refuse, naming the server, without it (issue 41)."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m042"
down_revision = "m041"


def upgrade() -> None:
    run("ALTER TABLE conversations ADD COLUMN mcp_servers {text} NOT NULL DEFAULT '{{}}'")
