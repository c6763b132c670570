"""m018_people_contacts: people's e-mail addresses (ATTENDEE of what is booked) and the CalDAV calendar their
busy time is read from; a table of its own beside `people`, so the people rows keep their shape."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m018"
down_revision = "m017"


def upgrade() -> None:
    run(
        """
        CREATE TABLE person_contacts (
            person_key {text} PRIMARY KEY REFERENCES people (key) ON DELETE CASCADE,
            email {text} CHECK (email IS NULL OR email {like} '%_@_%'),
            caldav_url {text} CHECK (caldav_url IS NULL OR caldav_url {like} 'http%://%')
        )
        """,
    )
