"""m014_people_hours_and_preferences: people as they really work (hours per weekday, days off, a buffer around
meetings, a lunch break), and the owner's standing preferences, which the system prompt carries.

`days` overrides `work_start`-`work_end` for some weekdays ('mon=10:00-16:00 fri=off'). A preference is free
text for the model; `rule` and `value` make it one the tools can check too; `rule` '' is text only.
"""

from scheduler_agent.storage.migrations.ddl import run, serial_id

revision = "m014"
down_revision = "m013"


def upgrade() -> None:
    run(
        "ALTER TABLE people ADD COLUMN days {text} NOT NULL DEFAULT ''",
        "ALTER TABLE people ADD COLUMN days_off {text} NOT NULL DEFAULT ''",  # 'YYYY-MM-DD ...'
        "ALTER TABLE people ADD COLUMN buffer_minutes {int} NOT NULL DEFAULT 0 "
        "CHECK (buffer_minutes BETWEEN 0 AND 120)",
        "ALTER TABLE people ADD COLUMN lunch {text} NOT NULL DEFAULT ''",  # 'HH:MM-HH:MM', or '' for none
        """
        CREATE TABLE preferences (
            {id},
            text {text} NOT NULL CHECK (text <> ''),
            rule {text} NOT NULL DEFAULT '' CHECK (rule IN ('', 'not_before', 'not_after', 'no_days', 'max_per_day')),
            value {text} NOT NULL DEFAULT '',
            created_at {text} NOT NULL DEFAULT {now}
        )
        """,
    )
    serial_id("preferences")
