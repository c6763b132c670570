--
-- PostgreSQL database dump
--

\restrict 2GJL8nsRdVR1jboumg1VZjGhhvGjIhWrfT1DmoXq0b142B7YrXilKX7hWMwMVtS

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: btree_gist; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;


--
-- Name: EXTENSION btree_gist; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION btree_gist IS 'support for indexing common datatypes in GiST';


--
-- Name: julianday(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.julianday(moment text) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CAST(extract(epoch FROM CAST(moment AS timestamptz)) AS DOUBLE PRECISION) / 86400
                + 2440587.5 $$;


--
-- Name: sa_fill_id(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.sa_fill_id() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    seq text := pg_get_serial_sequence(quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'id');
BEGIN
    -- SQLite's INTEGER PRIMARY KEY: NULL takes the next id; an explicit id moves the sequence past it
    IF NEW.id IS NULL THEN
        NEW.id := nextval(seq);
    ELSIF NEW.id > coalesce(pg_sequence_last_value(seq::regclass), 0) THEN
        PERFORM setval(seq, NEW.id);
    END IF;
    RETURN NEW;
END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: _migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public._migrations (
    seq bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    applied_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL
);


--
-- Name: _migrations_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public._migrations_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: _migrations_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public._migrations_seq_seq OWNED BY public._migrations.seq;


--
-- Name: approvals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.approvals (
    tool_use_id text NOT NULL COLLATE pg_catalog."C",
    approved bigint NOT NULL,
    reason text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    end_of_input bigint DEFAULT 0 NOT NULL,
    answered_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT approvals_approved_check CHECK ((approved = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT approvals_tool_use_id_check CHECK ((tool_use_id <> ''::text))
);


--
-- Name: booked_time; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.booked_time (
    event_id bigint NOT NULL,
    person_key text NOT NULL COLLATE pg_catalog."C",
    start_utc timestamp with time zone NOT NULL,
    end_utc timestamp with time zone NOT NULL,
    CONSTRAINT booked_time_check CHECK ((start_utc < end_utc))
);


--
-- Name: bookings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.bookings (
    tool_use_id text NOT NULL COLLATE pg_catalog."C",
    event_id bigint,
    result text NOT NULL COLLATE pg_catalog."C",
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    kind text DEFAULT 'create_event'::text NOT NULL COLLATE pg_catalog."C",
    input_hash text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT bookings_kind_check CHECK ((kind = ANY (ARRAY['create_event'::text, 'move_event'::text, 'cancel_event'::text]))),
    CONSTRAINT bookings_tool_use_id_check CHECK ((tool_use_id <> ''::text))
);


--
-- Name: caldav_bookings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.caldav_bookings (
    tool_use_id text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL COLLATE pg_catalog."C",
    href text NOT NULL COLLATE pg_catalog."C",
    uid text NOT NULL COLLATE pg_catalog."C",
    etag text COLLATE pg_catalog."C",
    event_id bigint,
    written bigint DEFAULT 0 NOT NULL,
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT caldav_bookings_href_check CHECK ((href <> ''::text)),
    CONSTRAINT caldav_bookings_kind_check CHECK ((kind = ANY (ARRAY['create_event'::text, 'move_event'::text, 'cancel_event'::text]))),
    CONSTRAINT caldav_bookings_tool_use_id_check CHECK ((tool_use_id <> ''::text)),
    CONSTRAINT caldav_bookings_written_check CHECK ((written = ANY (ARRAY[(0)::bigint, (1)::bigint])))
);


--
-- Name: caldav_connections; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.caldav_connections (
    person_key text NOT NULL COLLATE pg_catalog."C",
    url text NOT NULL COLLATE pg_catalog."C",
    username text NOT NULL COLLATE pg_catalog."C",
    calendar_url text NOT NULL COLLATE pg_catalog."C",
    calendar_name text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    password_source text NOT NULL COLLATE pg_catalog."C",
    email text COLLATE pg_catalog."C",
    invites bigint DEFAULT 1 NOT NULL,
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT caldav_connections_calendar_url_check CHECK ((calendar_url <> ''::text)),
    CONSTRAINT caldav_connections_invites_check CHECK ((invites = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT caldav_connections_password_source_check CHECK ((password_source <> ''::text)),
    CONSTRAINT caldav_connections_url_check CHECK ((url <> ''::text)),
    CONSTRAINT caldav_connections_username_check CHECK ((username <> ''::text))
);


--
-- Name: caldav_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.caldav_events (
    id bigint NOT NULL,
    href text NOT NULL COLLATE pg_catalog."C",
    uid text NOT NULL COLLATE pg_catalog."C",
    tool_use_id text COLLATE pg_catalog."C",
    CONSTRAINT caldav_events_href_check CHECK ((href <> ''::text))
);


--
-- Name: caldav_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.caldav_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: caldav_events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.caldav_events_id_seq OWNED BY public.caldav_events.id;


--
-- Name: conversations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.conversations (
    id bigint NOT NULL,
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    model text NOT NULL COLLATE pg_catalog."C",
    max_tokens bigint NOT NULL,
    system text NOT NULL COLLATE pg_catalog."C",
    tools text NOT NULL COLLATE pg_catalog."C",
    started_on text NOT NULL COLLATE pg_catalog."C",
    clock_pin text COLLATE pg_catalog."C",
    retries_exhausted bigint DEFAULT 0 NOT NULL,
    tool_deadlines bigint DEFAULT 0 NOT NULL,
    restarts bigint DEFAULT 0 NOT NULL,
    stream bigint DEFAULT 0 NOT NULL,
    last_stop text COLLATE pg_catalog."C",
    checked bigint DEFAULT 0 NOT NULL,
    checked_rules text COLLATE pg_catalog."C",
    CONSTRAINT conversations_checked_check CHECK ((checked >= 0)),
    CONSTRAINT conversations_last_stop_check CHECK ((last_stop = ANY (ARRAY['bound'::text, 'model'::text])))
);


--
-- Name: conversations_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.conversations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: conversations_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.conversations_id_seq OWNED BY public.conversations.id;


--
-- Name: entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.entries (
    conversation_id bigint NOT NULL,
    "position" bigint NOT NULL,
    role text NOT NULL COLLATE pg_catalog."C",
    content text NOT NULL COLLATE pg_catalog."C",
    size bigint,
    CONSTRAINT entries_position_check CHECK (("position" >= 0)),
    CONSTRAINT entries_role_check CHECK ((role = ANY (ARRAY['user'::text, 'assistant'::text]))),
    CONSTRAINT entries_size_check CHECK (((size IS NULL) OR (size > 0)))
);


--
-- Name: event_attendees; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_attendees (
    event_id bigint NOT NULL,
    person_key text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: event_series; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_series (
    event_id bigint NOT NULL,
    components text NOT NULL COLLATE pg_catalog."C",
    version text NOT NULL COLLATE pg_catalog."C",
    zone text NOT NULL COLLATE pg_catalog."C",
    day_zone text NOT NULL COLLATE pg_catalog."C",
    expanded_from text COLLATE pg_catalog."C",
    expanded_until text COLLATE pg_catalog."C"
);


--
-- Name: event_sources; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_sources (
    event_id bigint NOT NULL,
    person_key text NOT NULL COLLATE pg_catalog."C",
    origin text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    uid text NOT NULL COLLATE pg_catalog."C",
    recurrence_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT event_sources_new_uid_check CHECK ((uid <> ''::text))
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    id bigint NOT NULL,
    title text NOT NULL COLLATE pg_catalog."C",
    start_utc text NOT NULL COLLATE pg_catalog."C",
    end_utc text NOT NULL COLLATE pg_catalog."C",
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    tz text COLLATE pg_catalog."C",
    all_day bigint DEFAULT 0 NOT NULL,
    rrule text COLLATE pg_catalog."C",
    rdates text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    exdates text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT events_all_day_check CHECK ((all_day = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT events_check CHECK ((start_utc < end_utc)),
    CONSTRAINT events_title_check CHECK ((title <> ''::text))
);


--
-- Name: events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.events_id_seq OWNED BY public.events.id;


--
-- Name: feeds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.feeds (
    id bigint NOT NULL,
    person_key text NOT NULL COLLATE pg_catalog."C",
    url text NOT NULL COLLATE pg_catalog."C",
    refresh_seconds bigint DEFAULT 900 NOT NULL,
    etag text COLLATE pg_catalog."C",
    last_modified text COLLATE pg_catalog."C",
    fetched_at text COLLATE pg_catalog."C",
    ok_at text COLLATE pg_catalog."C",
    result text DEFAULT 'never fetched'::text NOT NULL COLLATE pg_catalog."C",
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT feeds_refresh_seconds_check CHECK ((refresh_seconds > 0)),
    CONSTRAINT feeds_url_check CHECK ((url <> ''::text))
);


--
-- Name: feeds_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.feeds_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: feeds_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.feeds_id_seq OWNED BY public.feeds.id;


--
-- Name: leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.leases (
    conversation_id bigint NOT NULL,
    holder_host text NOT NULL COLLATE pg_catalog."C",
    holder_pid bigint NOT NULL,
    since text NOT NULL COLLATE pg_catalog."C",
    expires text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: occurrences; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.occurrences (
    event_id bigint NOT NULL,
    start_utc text NOT NULL COLLATE pg_catalog."C",
    end_utc text NOT NULL COLLATE pg_catalog."C",
    title text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT occurrences_check CHECK ((start_utc < end_utc))
);


--
-- Name: pending_approvals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pending_approvals (
    tool_use_id text NOT NULL COLLATE pg_catalog."C",
    conversation_id bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    summary text NOT NULL COLLATE pg_catalog."C",
    asked_at text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT pending_approvals_tool_use_id_check CHECK ((tool_use_id <> ''::text))
);


--
-- Name: people; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.people (
    key text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    tz text NOT NULL COLLATE pg_catalog."C",
    work_start text NOT NULL COLLATE pg_catalog."C",
    work_end text NOT NULL COLLATE pg_catalog."C",
    days text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    days_off text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    buffer_minutes bigint DEFAULT 0 NOT NULL,
    lunch text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT people_buffer_minutes_check CHECK (((buffer_minutes >= 0) AND (buffer_minutes <= 120))),
    CONSTRAINT people_check CHECK ((work_start < work_end)),
    CONSTRAINT people_key_check CHECK (((key <> ''::text) AND (key = lower(key)))),
    CONSTRAINT people_name_check CHECK ((name <> ''::text))
);


--
-- Name: person_contacts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.person_contacts (
    person_key text NOT NULL COLLATE pg_catalog."C",
    email text COLLATE pg_catalog."C",
    caldav_url text COLLATE pg_catalog."C",
    CONSTRAINT person_contacts_caldav_url_check CHECK (((caldav_url IS NULL) OR (caldav_url ~~* 'http%://%'::text))),
    CONSTRAINT person_contacts_email_check CHECK (((email IS NULL) OR (email ~~* '%_@_%'::text)))
);


--
-- Name: preferences; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.preferences (
    id bigint NOT NULL,
    text text NOT NULL COLLATE pg_catalog."C",
    rule text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    value text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT preferences_rule_check CHECK ((rule = ANY (ARRAY[''::text, 'not_before'::text, 'not_after'::text, 'no_days'::text, 'max_per_day'::text]))),
    CONSTRAINT preferences_text_check CHECK ((text <> ''::text))
);


--
-- Name: preferences_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.preferences_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: preferences_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.preferences_id_seq OWNED BY public.preferences.id;


--
-- Name: repairs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.repairs (
    conversation_id bigint NOT NULL,
    seq bigint NOT NULL,
    changes text NOT NULL COLLATE pg_catalog."C",
    before text NOT NULL COLLATE pg_catalog."C",
    repaired_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: replies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.replies (
    conversation_id bigint NOT NULL,
    seq bigint NOT NULL,
    "position" bigint NOT NULL,
    iteration bigint NOT NULL,
    model text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    stop_reason text COLLATE pg_catalog."C",
    usage text DEFAULT '{}'::text NOT NULL COLLATE pg_catalog."C",
    request_bytes bigint DEFAULT 0 NOT NULL,
    appended bigint DEFAULT 1 NOT NULL,
    body text COLLATE pg_catalog."C",
    created_at text DEFAULT to_char((now() AT TIME ZONE 'UTC'::text), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'::text) NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: work_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.work_queue (
    conversation_id bigint NOT NULL,
    state text NOT NULL COLLATE pg_catalog."C",
    text text COLLATE pg_catalog."C",
    base bigint DEFAULT 0 NOT NULL,
    approved text DEFAULT '[]'::text NOT NULL COLLATE pg_catalog."C",
    submitted_at text NOT NULL COLLATE pg_catalog."C",
    claims bigint DEFAULT 0 NOT NULL,
    claimed_at text COLLATE pg_catalog."C",
    finished_at text COLLATE pg_catalog."C",
    exit_code bigint,
    answer text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    statement text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT work_queue_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'needs-approval'::text, 'done'::text, 'failed'::text])))
);


--
-- Name: _migrations seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations ALTER COLUMN seq SET DEFAULT nextval('public._migrations_seq_seq'::regclass);


--
-- Name: caldav_events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_events ALTER COLUMN id SET DEFAULT nextval('public.caldav_events_id_seq'::regclass);


--
-- Name: conversations id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversations ALTER COLUMN id SET DEFAULT nextval('public.conversations_id_seq'::regclass);


--
-- Name: events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events ALTER COLUMN id SET DEFAULT nextval('public.events_id_seq'::regclass);


--
-- Name: feeds id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.feeds ALTER COLUMN id SET DEFAULT nextval('public.feeds_id_seq'::regclass);


--
-- Name: preferences id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.preferences ALTER COLUMN id SET DEFAULT nextval('public.preferences_id_seq'::regclass);


--
-- Data for Name: _migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public._migrations VALUES (1, 'm001_calendar', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (2, 'm002_bookings', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (3, 'm003_conversations', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (4, 'm004_approvals', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (5, 'm005_recurrence', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (6, 'm006_conversation_stream', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (7, 'm007_replies', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (8, 'm008_turn_stops', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (9, 'm010_leases_and_repairs', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (10, 'm012_series', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (11, 'm013_feeds', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (12, 'm014_people_hours_and_preferences', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (13, 'm015_bookings_kind_and_input', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (14, 'm017_caldav_connections', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (15, 'm018_people_contacts', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (16, 'm019_entry_sizes_and_checked', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (17, 'm021_busy_time_indexes', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (18, 'm023_caldav_bookings', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (19, 'm025_booked_time', '2026-12-04T16:16:25Z');
INSERT INTO public._migrations VALUES (20, 'm030_work_queue', '2026-12-04T16:16:26Z');
INSERT INTO public._migrations VALUES (21, 'm031_pending_approvals', '2026-12-04T16:16:26Z');
INSERT INTO public._migrations VALUES (22, 'm034_checked_rules', '2026-12-04T16:16:26Z');
INSERT INTO public._migrations VALUES (23, 'm035_length_indexes', '2026-12-04T16:16:26Z');
INSERT INTO public._migrations VALUES (24, 'm036_fewer_indexes_to_write', '2026-12-04T16:16:26Z');


--
-- Data for Name: approvals; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: booked_time; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: bookings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: caldav_bookings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: caldav_connections; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: caldav_events; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: conversations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.conversations VALUES (1, '2026-12-04T16:16:26Z', 'claude-sonnet-5-5', 1024, 'You schedule meetings.', '[]', '2026-08-27', NULL, 0, 0, 0, 0, NULL, 0, NULL);


--
-- Data for Name: entries; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.entries VALUES (1, 0, 'user', '[{"type":"text","text":"Book 30 minutes with Priya."}]', NULL);


--
-- Data for Name: event_attendees; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.event_attendees VALUES (1, 'priya');


--
-- Data for Name: event_series; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: event_sources; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.events VALUES (1, 'Roadmap', '2026-08-31T13:00:00Z', '2026-08-31T14:00:00Z', '2026-12-04T16:16:26Z', NULL, 0, NULL, '', '');


--
-- Data for Name: feeds; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: leases; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: occurrences; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: pending_approvals; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: people; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.people VALUES ('you', 'Jordan Lee', 'Europe/London', '09:00', '17:00', '', '', 0, '');
INSERT INTO public.people VALUES ('priya', 'Priya Raman', 'Europe/London', '09:00', '17:00', '', '', 0, '');


--
-- Data for Name: person_contacts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: preferences; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: repairs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: replies; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: work_queue; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: _migrations_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public._migrations_seq_seq', 24, true);


--
-- Name: caldav_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.caldav_events_id_seq', 1, false);


--
-- Name: conversations_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.conversations_id_seq', 1, true);


--
-- Name: events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.events_id_seq', 1, true);


--
-- Name: feeds_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.feeds_id_seq', 1, false);


--
-- Name: preferences_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.preferences_id_seq', 1, false);


--
-- Name: _migrations _migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._migrations
    ADD CONSTRAINT _migrations_pkey PRIMARY KEY (name);


--
-- Name: approvals approvals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (tool_use_id);


--
-- Name: booked_time booked_time_no_overlap; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.booked_time
    ADD CONSTRAINT booked_time_no_overlap EXCLUDE USING gist (person_key WITH =, tstzrange(start_utc, end_utc) WITH &&);


--
-- Name: booked_time booked_time_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.booked_time
    ADD CONSTRAINT booked_time_pkey PRIMARY KEY (event_id, person_key);


--
-- Name: bookings bookings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.bookings
    ADD CONSTRAINT bookings_pkey PRIMARY KEY (tool_use_id);


--
-- Name: caldav_bookings caldav_bookings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_bookings
    ADD CONSTRAINT caldav_bookings_pkey PRIMARY KEY (tool_use_id);


--
-- Name: caldav_connections caldav_connections_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_connections
    ADD CONSTRAINT caldav_connections_pkey PRIMARY KEY (person_key);


--
-- Name: caldav_events caldav_events_href_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_events
    ADD CONSTRAINT caldav_events_href_key UNIQUE (href);


--
-- Name: caldav_events caldav_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_events
    ADD CONSTRAINT caldav_events_pkey PRIMARY KEY (id);


--
-- Name: caldav_events caldav_events_tool_use_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_events
    ADD CONSTRAINT caldav_events_tool_use_id_key UNIQUE (tool_use_id);


--
-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (id);


--
-- Name: entries entries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.entries
    ADD CONSTRAINT entries_pkey PRIMARY KEY (conversation_id, "position");


--
-- Name: event_attendees event_attendees_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_attendees
    ADD CONSTRAINT event_attendees_pkey PRIMARY KEY (event_id, person_key);


--
-- Name: event_series event_series_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_series
    ADD CONSTRAINT event_series_pkey PRIMARY KEY (event_id);


--
-- Name: event_sources event_sources_new_person_key_origin_uid_recurrence_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_sources
    ADD CONSTRAINT event_sources_new_person_key_origin_uid_recurrence_id_key UNIQUE (person_key, origin, uid, recurrence_id);


--
-- Name: event_sources event_sources_new_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_sources
    ADD CONSTRAINT event_sources_new_pkey PRIMARY KEY (event_id);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);


--
-- Name: feeds feeds_person_key_url_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.feeds
    ADD CONSTRAINT feeds_person_key_url_key UNIQUE (person_key, url);


--
-- Name: feeds feeds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.feeds
    ADD CONSTRAINT feeds_pkey PRIMARY KEY (id);


--
-- Name: leases leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.leases
    ADD CONSTRAINT leases_pkey PRIMARY KEY (conversation_id);


--
-- Name: pending_approvals pending_approvals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pending_approvals
    ADD CONSTRAINT pending_approvals_pkey PRIMARY KEY (tool_use_id);


--
-- Name: people people_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.people
    ADD CONSTRAINT people_pkey PRIMARY KEY (key);


--
-- Name: person_contacts person_contacts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.person_contacts
    ADD CONSTRAINT person_contacts_pkey PRIMARY KEY (person_key);


--
-- Name: preferences preferences_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.preferences
    ADD CONSTRAINT preferences_pkey PRIMARY KEY (id);


--
-- Name: repairs repairs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.repairs
    ADD CONSTRAINT repairs_pkey PRIMARY KEY (conversation_id, seq);


--
-- Name: replies replies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replies
    ADD CONSTRAINT replies_pkey PRIMARY KEY (conversation_id, seq);


--
-- Name: work_queue work_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.work_queue
    ADD CONSTRAINT work_queue_pkey PRIMARY KEY (conversation_id);


--
-- Name: event_attendees_by_person; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX event_attendees_by_person ON public.event_attendees USING btree (person_key, event_id);


--
-- Name: events_repeating; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_repeating ON public.events USING btree (start_utc) WHERE ((rrule IS NOT NULL) OR (rdates <> ''::text));


--
-- Name: events_single_by_length; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_single_by_length ON public.events USING btree (((public.julianday(end_utc) - public.julianday(start_utc)))) WHERE ((rrule IS NULL) AND (rdates = ''::text));


--
-- Name: events_single_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_single_by_time ON public.events USING btree (start_utc, end_utc) WHERE ((rrule IS NULL) AND (rdates = ''::text));


--
-- Name: occurrences_by_event; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX occurrences_by_event ON public.occurrences USING btree (event_id);


--
-- Name: occurrences_by_length; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX occurrences_by_length ON public.occurrences USING btree (((public.julianday(end_utc) - public.julianday(start_utc))));


--
-- Name: occurrences_by_time_event; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX occurrences_by_time_event ON public.occurrences USING btree (start_utc, end_utc, event_id);


--
-- Name: pending_approvals_by_conversation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pending_approvals_by_conversation ON public.pending_approvals USING btree (conversation_id);


--
-- Name: work_queue_by_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX work_queue_by_state ON public.work_queue USING btree (state, submitted_at);


--
-- Name: caldav_events caldav_events_fill_id; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER caldav_events_fill_id BEFORE INSERT ON public.caldav_events FOR EACH ROW EXECUTE FUNCTION public.sa_fill_id();


--
-- Name: conversations conversations_fill_id; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER conversations_fill_id BEFORE INSERT ON public.conversations FOR EACH ROW EXECUTE FUNCTION public.sa_fill_id();


--
-- Name: events events_fill_id; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_fill_id BEFORE INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION public.sa_fill_id();


--
-- Name: feeds feeds_fill_id; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER feeds_fill_id BEFORE INSERT ON public.feeds FOR EACH ROW EXECUTE FUNCTION public.sa_fill_id();


--
-- Name: preferences preferences_fill_id; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER preferences_fill_id BEFORE INSERT ON public.preferences FOR EACH ROW EXECUTE FUNCTION public.sa_fill_id();


--
-- Name: booked_time booked_time_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.booked_time
    ADD CONSTRAINT booked_time_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;


--
-- Name: booked_time booked_time_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.booked_time
    ADD CONSTRAINT booked_time_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key) ON DELETE CASCADE;


--
-- Name: bookings bookings_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.bookings
    ADD CONSTRAINT bookings_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE SET NULL;


--
-- Name: caldav_bookings caldav_bookings_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_bookings
    ADD CONSTRAINT caldav_bookings_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.caldav_events(id);


--
-- Name: caldav_connections caldav_connections_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.caldav_connections
    ADD CONSTRAINT caldav_connections_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key) ON DELETE CASCADE;


--
-- Name: entries entries_conversation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.entries
    ADD CONSTRAINT entries_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: event_attendees event_attendees_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_attendees
    ADD CONSTRAINT event_attendees_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;


--
-- Name: event_attendees event_attendees_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_attendees
    ADD CONSTRAINT event_attendees_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key);


--
-- Name: event_series event_series_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_series
    ADD CONSTRAINT event_series_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;


--
-- Name: event_sources event_sources_new_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_sources
    ADD CONSTRAINT event_sources_new_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;


--
-- Name: event_sources event_sources_new_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_sources
    ADD CONSTRAINT event_sources_new_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key);


--
-- Name: feeds feeds_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.feeds
    ADD CONSTRAINT feeds_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key);


--
-- Name: leases leases_conversation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.leases
    ADD CONSTRAINT leases_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: occurrences occurrences_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.occurrences
    ADD CONSTRAINT occurrences_event_id_fkey FOREIGN KEY (event_id) REFERENCES public.events(id) ON DELETE CASCADE;


--
-- Name: pending_approvals pending_approvals_conversation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pending_approvals
    ADD CONSTRAINT pending_approvals_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: person_contacts person_contacts_person_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.person_contacts
    ADD CONSTRAINT person_contacts_person_key_fkey FOREIGN KEY (person_key) REFERENCES public.people(key) ON DELETE CASCADE;


--
-- Name: repairs repairs_conversation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.repairs
    ADD CONSTRAINT repairs_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: replies replies_conversation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replies
    ADD CONSTRAINT replies_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- Name: work_queue work_queue_conversation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.work_queue
    ADD CONSTRAINT work_queue_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES public.conversations(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict 2GJL8nsRdVR1jboumg1VZjGhhvGjIhWrfT1DmoXq0b142B7YrXilKX7hWMwMVtS

