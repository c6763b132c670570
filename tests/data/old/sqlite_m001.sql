BEGIN TRANSACTION;
CREATE TABLE _migrations ( name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
INSERT INTO "_migrations" VALUES('m001_calendar','2026-12-04T16:16:21Z');
CREATE TABLE event_attendees (
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key),
            PRIMARY KEY (event_id, person_key)
        );
INSERT INTO "event_attendees" VALUES(1,'priya');
CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL CHECK (title <> ''),
            start_utc TEXT NOT NULL,  -- 'YYYY-MM-DDTHH:MM:SSZ', so text order is time order
            end_utc TEXT NOT NULL CHECK (start_utc < end_utc),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
INSERT INTO "events" VALUES(1,'Roadmap','2026-08-31T13:00:00Z','2026-08-31T14:00:00Z','2026-12-04T16:16:21Z');
CREATE TABLE people (
            key TEXT PRIMARY KEY CHECK (key <> '' AND key = lower(key)),
            name TEXT NOT NULL CHECK (name <> ''),
            tz TEXT NOT NULL,
            work_start TEXT NOT NULL,  -- 'HH:MM', local time in tz
            work_end TEXT NOT NULL CHECK (work_start < work_end)
        );
INSERT INTO "people" VALUES('you','Jordan Lee','Europe/London','09:00','17:00');
INSERT INTO "people" VALUES('priya','Priya Raman','Europe/London','09:00','17:00');
CREATE INDEX events_by_time ON events (start_utc, end_utc);
CREATE INDEX event_attendees_by_person ON event_attendees (person_key, event_id);
COMMIT;
