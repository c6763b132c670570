BEGIN TRANSACTION;
CREATE TABLE _migrations ( name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
INSERT INTO "_migrations" VALUES('m001_calendar','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m002_bookings','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m003_conversations','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m004_approvals','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m005_recurrence','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m006_conversation_stream','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m007_replies','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m008_turn_stops','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m010_leases_and_repairs','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m012_series','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m013_feeds','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m014_people_hours_and_preferences','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m015_bookings_kind_and_input','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m017_caldav_connections','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m018_people_contacts','2026-12-04T16:16:23Z');
INSERT INTO "_migrations" VALUES('m019_entry_sizes_and_checked','2026-12-04T16:16:23Z');
CREATE TABLE approvals (
            tool_use_id TEXT PRIMARY KEY CHECK (tool_use_id <> ''),
            approved INTEGER NOT NULL CHECK (approved IN (0, 1)),
            reason TEXT NOT NULL DEFAULT '',
            end_of_input INTEGER NOT NULL DEFAULT 0,  -- refused because standard input ended
            answered_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
CREATE TABLE bookings (
            tool_use_id TEXT PRIMARY KEY CHECK (tool_use_id <> ''),
            event_id INTEGER REFERENCES events (id) ON DELETE SET NULL,
            result TEXT NOT NULL,  -- the tool_result text the call answered with
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        , kind TEXT NOT NULL DEFAULT 'create_event' CHECK (kind IN ('create_event', 'move_event', 'cancel_event')), input_hash TEXT NOT NULL DEFAULT '');
CREATE TABLE caldav_connections (
            person_key TEXT PRIMARY KEY REFERENCES people (key) ON DELETE CASCADE,
            url TEXT NOT NULL CHECK (url <> ''),
            username TEXT NOT NULL CHECK (username <> ''),
            calendar_url TEXT NOT NULL CHECK (calendar_url <> ''),
            calendar_name TEXT NOT NULL DEFAULT '',
            password_source TEXT NOT NULL CHECK (password_source <> ''),
            email TEXT,                     -- the owner's address, the ORGANIZER of what is booked
            invites INTEGER NOT NULL DEFAULT 1 CHECK (invites IN (0, 1)),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
CREATE TABLE caldav_events (
            id INTEGER PRIMARY KEY,
            href TEXT NOT NULL UNIQUE CHECK (href <> ''),  -- the resource's full URL
            uid TEXT NOT NULL,
            tool_use_id TEXT UNIQUE         -- the create_event call that wrote it, if one did
        );
CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            model TEXT NOT NULL,
            max_tokens INTEGER NOT NULL,
            system TEXT NOT NULL,
            tools TEXT NOT NULL,            -- JSON, the definitions as sent
            started_on TEXT NOT NULL,       -- the clock's date (owner's zone) when it started
            clock_pin TEXT,                 -- the pinned instant (ISO, UTC) if the clock was pinned
            retries_exhausted INTEGER NOT NULL DEFAULT 0,
            tool_deadlines INTEGER NOT NULL DEFAULT 0,
            restarts INTEGER NOT NULL DEFAULT 0
        , stream INTEGER NOT NULL DEFAULT 0, last_stop TEXT CHECK (last_stop IN ('bound', 'model')), checked INTEGER NOT NULL DEFAULT 0 CHECK (checked >= 0));
INSERT INTO "conversations" VALUES(1,'2026-12-04T16:16:23Z','claude-sonnet-5-5',1024,'You schedule meetings.','[]','2026-08-27',NULL,0,0,0,0,NULL,0);
CREATE TABLE entries (
            conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            content TEXT NOT NULL, size INTEGER CHECK (size IS NULL OR size > 0),          -- JSON, exactly as sent
            PRIMARY KEY (conversation_id, position)
        );
INSERT INTO "entries" VALUES(1,0,'user','[{"type":"text","text":"Book 30 minutes with Priya."}]',NULL);
CREATE TABLE event_attendees (
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key),
            PRIMARY KEY (event_id, person_key)
        );
INSERT INTO "event_attendees" VALUES(1,'priya');
CREATE TABLE event_series (
            event_id INTEGER PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            components TEXT NOT NULL,        -- a VCALENDAR: master, overrides, the VTIMEZONEs they use
            version TEXT NOT NULL,           -- a digest of components and zones: the parse cache's key
            zone TEXT NOT NULL,              -- floating times are wall-clock time here
            day_zone TEXT NOT NULL,          -- dates are whole days here
            expanded_from TEXT,              -- the span materialised in occurrences (UTC); NULL: none
            expanded_until TEXT
        );
CREATE TABLE "event_sources" (
            event_id INTEGER PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key),
            origin TEXT NOT NULL DEFAULT '',  -- '' for a file, 'feed:N' for feed N
            uid TEXT NOT NULL CHECK (uid <> ''),
            recurrence_id TEXT NOT NULL DEFAULT '',
            UNIQUE (person_key, origin, uid, recurrence_id)
        );
CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL CHECK (title <> ''),
            start_utc TEXT NOT NULL,  -- 'YYYY-MM-DDTHH:MM:SSZ', so text order is time order
            end_utc TEXT NOT NULL CHECK (start_utc < end_utc),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        , tz TEXT, all_day INTEGER NOT NULL DEFAULT 0 CHECK (all_day IN (0, 1)), rrule TEXT, rdates TEXT NOT NULL DEFAULT '', exdates TEXT NOT NULL DEFAULT '');
INSERT INTO "events" VALUES(1,'Roadmap','2026-08-31T13:00:00Z','2026-08-31T14:00:00Z','2026-12-04T16:16:23Z',NULL,0,NULL,'','');
CREATE TABLE feeds (
            id INTEGER PRIMARY KEY,
            person_key TEXT NOT NULL REFERENCES people (key),
            url TEXT NOT NULL CHECK (url <> ''),
            refresh_seconds INTEGER NOT NULL DEFAULT 900 CHECK (refresh_seconds > 0),
            etag TEXT,
            last_modified TEXT,
            fetched_at TEXT,                 -- the last attempt (UTC)
            ok_at TEXT,                      -- the last attempt that gave a good copy (or 304)
            result TEXT NOT NULL DEFAULT 'never fetched',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            UNIQUE (person_key, url)
        );
CREATE TABLE leases (
            conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
            holder_host TEXT NOT NULL,
            holder_pid INTEGER NOT NULL,
            since TEXT NOT NULL,     -- ISO UTC: when this holder claimed it
            expires TEXT NOT NULL    -- ISO UTC: it lapses then unless renewed
        );
CREATE TABLE length_bounds (what TEXT PRIMARY KEY, seconds INTEGER NOT NULL);
INSERT INTO "length_bounds" VALUES('event',3600);
INSERT INTO "length_bounds" VALUES('occurrence',0);
CREATE TABLE occurrences (
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL CHECK (start_utc < end_utc),
            title TEXT NOT NULL
        );
CREATE TABLE people (
            key TEXT PRIMARY KEY CHECK (key <> '' AND key = lower(key)),
            name TEXT NOT NULL CHECK (name <> ''),
            tz TEXT NOT NULL,
            work_start TEXT NOT NULL,  -- 'HH:MM', local time in tz
            work_end TEXT NOT NULL CHECK (work_start < work_end)
        , days TEXT NOT NULL DEFAULT '', days_off TEXT NOT NULL DEFAULT '', buffer_minutes INTEGER NOT NULL DEFAULT 0 CHECK (buffer_minutes BETWEEN 0 AND 120), lunch TEXT NOT NULL DEFAULT '');
INSERT INTO "people" VALUES('you','Jordan Lee','Europe/London','09:00','17:00','','',0,'');
INSERT INTO "people" VALUES('priya','Priya Raman','Europe/London','09:00','17:00','','',0,'');
CREATE TABLE person_contacts (
            person_key TEXT PRIMARY KEY REFERENCES people (key) ON DELETE CASCADE,
            email TEXT CHECK (email IS NULL OR email LIKE '%_@_%'),
            caldav_url TEXT CHECK (caldav_url IS NULL OR caldav_url LIKE 'http%://%')
        );
CREATE TABLE preferences (
            id INTEGER PRIMARY KEY,
            text TEXT NOT NULL CHECK (text <> ''),
            rule TEXT NOT NULL DEFAULT '' CHECK (rule IN ('', 'not_before', 'not_after', 'no_days', 'max_per_day')),
            value TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
CREATE TABLE repairs (
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            changes TEXT NOT NULL,   -- JSON: one sentence per change
            before TEXT NOT NULL,    -- JSON: the whole list before the repair
            repaired_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            PRIMARY KEY (conversation_id, seq)
        );
CREATE TABLE replies (
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,               -- 1, 2, ... in the order the replies arrived
            position INTEGER NOT NULL,          -- the list's length when the request was sent
            iteration INTEGER NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            stop_reason TEXT,
            usage TEXT NOT NULL DEFAULT '{}',   -- the API's usage object, as it came
            request_bytes INTEGER NOT NULL DEFAULT 0,
            appended INTEGER NOT NULL DEFAULT 1,
            body TEXT,                          -- the whole reply, only when it was not appended
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            PRIMARY KEY (conversation_id, seq)
        );
CREATE INDEX events_by_time ON events (start_utc, end_utc);
CREATE INDEX event_attendees_by_person ON event_attendees (person_key, event_id);
CREATE INDEX occurrences_by_time ON occurrences (start_utc, end_utc);
CREATE INDEX occurrences_by_event ON occurrences (event_id);
CREATE INDEX events_repeating ON events (start_utc) WHERE rrule IS NOT NULL OR rdates <> '';
CREATE TRIGGER events_length_insert AFTER INSERT ON events BEGIN
                UPDATE length_bounds SET seconds = max(seconds, coalesce(
                    CAST(round((julianday(NEW.end_utc) - julianday(NEW.start_utc)) * 86400) AS INTEGER), 0))
                WHERE what = 'event';
            END;
CREATE TRIGGER events_length_update AFTER UPDATE OF start_utc, end_utc ON events BEGIN
                UPDATE length_bounds SET seconds = max(seconds, coalesce(
                    CAST(round((julianday(NEW.end_utc) - julianday(NEW.start_utc)) * 86400) AS INTEGER), 0))
                WHERE what = 'event';
            END;
CREATE TRIGGER occurrences_length_insert AFTER INSERT ON occurrences BEGIN
                UPDATE length_bounds SET seconds = max(seconds, coalesce(
                    CAST(round((julianday(NEW.end_utc) - julianday(NEW.start_utc)) * 86400) AS INTEGER), 0))
                WHERE what = 'occurrence';
            END;
CREATE TRIGGER occurrences_length_update AFTER UPDATE OF start_utc, end_utc ON occurrences BEGIN
                UPDATE length_bounds SET seconds = max(seconds, coalesce(
                    CAST(round((julianday(NEW.end_utc) - julianday(NEW.start_utc)) * 86400) AS INTEGER), 0))
                WHERE what = 'occurrence';
            END;
CREATE INDEX event_sources_by_origin ON event_sources (origin);
COMMIT;
