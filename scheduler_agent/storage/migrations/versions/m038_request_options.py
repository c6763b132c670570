"""m038_request_options: the request keys a person set with `-o/--option` for the turn in force (a JSON
object, `{}` for none), kept with the rest of what the API sees besides the list, so that `resume` sends
them again; a new turn writes its own, so they do not carry over to a later `-c` turn."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m038"
down_revision = "m037"


def upgrade() -> None:
    run("ALTER TABLE conversations ADD COLUMN options {text} NOT NULL DEFAULT '{{}}'")
