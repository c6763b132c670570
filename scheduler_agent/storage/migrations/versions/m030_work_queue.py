"""m030_work_queue: the turns handed to workers (`submit`): one row per conversation, what it waits for and
how it ended. `text` is the submitted text while no worker has put it in the list yet (`base`: the list's
length when it was submitted). Times are ISO UTC text written by the code, on any database."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m030"
down_revision = "m025"


def upgrade() -> None:
    run(
        """
        CREATE TABLE work_queue (
            conversation_id {int} PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
            state {text} NOT NULL CHECK (state IN ('queued', 'needs-approval', 'done', 'failed')),
            text {text},                          -- the submitted text, until a worker adds it to the list
            base {int} NOT NULL DEFAULT 0,    -- the list's length when it was submitted
            approved {text} NOT NULL DEFAULT '[]',  -- JSON: the tools run without asking (`--yes`)
            submitted_at {text} NOT NULL,
            claims {int} NOT NULL DEFAULT 0,  -- how many times a worker took it up
            claimed_at {text},                    -- when a worker first took it up
            finished_at {text},
            exit_code {int},                  -- as `ask` would have exited
            answer {text} NOT NULL DEFAULT '',    -- the model's last text
            statement {text} NOT NULL DEFAULT ''  -- why it stopped, when not done, or the error
        )
        """,
        "CREATE INDEX work_queue_by_state ON work_queue (state, submitted_at)",
    )
